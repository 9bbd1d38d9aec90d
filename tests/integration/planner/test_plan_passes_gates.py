"""Acceptance: the planner's proposal passes the real gates; a planted problem is fixed.

Runs ``backend.gates.runner.run_gates`` with the real scanners (hadolint, detect-secrets,
semgrep with the shipped rules, the built-in checks). Missing scanners skip locally and
FAIL with ``CI=true``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from backend.cli import main
from backend.gates.runner import GateReport, resolve_semgrep, run_gates
from backend.planner import COMPOSE_PATH, WORKFLOW_PATH, correct, plan
from tests.ci import in_ci

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "repos"


@pytest.fixture(scope="module", autouse=True)
def _scanners() -> None:
    missing = [n for n in ("hadolint", "detect-secrets") if shutil.which(n) is None]
    if resolve_semgrep() is None:
        missing.append("semgrep")
    if missing:
        if in_ci():
            pytest.fail(f"gate scanners required in CI are missing: {', '.join(missing)}")
        pytest.skip(f"gate scanners missing: {', '.join(missing)}")


def _assert_real_pass(report: GateReport) -> None:
    document = report.to_json()
    assert report.verdict == "pass", document
    for gate in report.gates:
        assert gate.status == "pass", document
        assert gate.skipped == [], document
    tools = {s.tool for g in report.gates for s in g.scans}
    assert {"hadolint", "semgrep", "detect-secrets"} <= tools, tools


@pytest.mark.parametrize("sample", ["python-api", "node-web", "go-svc", "java-app", "multi"])
def test_plan_passes_gates(sample: str) -> None:
    _assert_real_pass(run_gates(plan(SAMPLES / sample)))


def _plant(files: dict[str, str]) -> dict[str, str]:
    """The proposal with one problem of each kind the gates catch."""
    out = dict(files)
    out["Dockerfile"] = (
        files["Dockerfile"]
        .replace("FROM python:3.11.9-slim-bookworm AS runtime", "FROM python:latest AS runtime")
        .replace(
            "USER 10001\n", "USER root\nENV API_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789\n"
        )
        .replace(
            "WORKDIR /app\nCOPY --from",
            "WORKDIR /app\nADD https://example.com/tool.tar.gz /opt/\nCOPY --from",
            1,
        )
    )
    out[COMPOSE_PATH] = (
        files[COMPOSE_PATH]
        .replace('"127.0.0.1:8000:8000"', '"0.0.0.0:8000:8000"')
        .replace('    environment:\n      PORT: "8000"\n', "")
        .replace(
            "    read_only: true\n",
            "    read_only: true\n    privileged: true\n    network_mode: host\n"
            "    volumes:\n      - /var/run/docker.sock:/var/run/docker.sock\n"
            "    environment:\n      DB_PASSWORD: hunter2hunter2secret\n",
            1,
        )
    )
    out[WORKFLOW_PATH] = (
        files[WORKFLOW_PATH]
        .replace("on: [push, pull_request]", "on: [push, pull_request_target]")
        .replace("permissions:\n  contents: read\n", "")
        .replace(
            "      - name: Install\n",
            '      - name: Greet\n        run: echo "${{ github.event.pull_request.title }}"\n'
            "      - name: Install\n",
            1,
        )
    )
    # a random key in AWS's format (AWS's documented example key is not a secret)
    out["config/app.env"] = "AWS_ACCESS_KEY_ID=AKIA" + "Q7RZ3M5X2KD8HT4W\nLOG_LEVEL=info\n"
    return out


def test_planted_problems_are_corrected_to_pass() -> None:
    planted = _plant(plan(SAMPLES / "python-api"))
    first = run_gates(planted)
    assert first.verdict == "changes_requested"
    rules = {f.rule for f in first.findings}
    assert {
        "DL3007",
        "dockerfile-root-user",
        "dockerfile-add-url",
        "compose-privileged",
        "compose-host-network",
        "compose-port-all-interfaces",
        "compose-docker-socket",
        "gha-pull-request-target",
        "gha-missing-top-level-permissions",
        "gha-event-interpolated-in-run",
        "dockerfile-secret-in-env",
        "aws-access-key-id",
    } <= rules, rules

    corrected = correct(planted, [f.to_json() for f in first.findings])

    _assert_real_pass(run_gates(corrected))
    assert "hunter2" not in corrected[COMPOSE_PATH]
    assert "ghp_" not in corrected["Dockerfile"]


def test_cli_output_dir_mirrors_layout_and_passes_gates(tmp_path: Path) -> None:
    out = tmp_path / "proposal"
    assert main(["infra", "plan", str(SAMPLES / "multi"), "--out", str(out)]) == 0
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert written == sorted(plan(SAMPLES / "multi"))
    assert (out / "services/api/Dockerfile").is_file()
    assert (out / WORKFLOW_PATH).is_file()
    _assert_real_pass(run_gates(out))


def test_plan_repos_proposals_pass_gates_in_one_run() -> None:
    """Every sample of ``plan_repos`` at once (one scanner run, each under its own prefix):
    the new start commands and runtime images pass the same gates."""
    repos = SAMPLES.parent / "plan_repos"
    files = {
        f"{repo.name}/{rel}": text
        for repo in sorted(p for p in repos.iterdir() if p.is_dir())
        for rel, text in plan(repo).items()
    }
    assert len({path.split("/", 1)[0] for path in files}) == 11
    _assert_real_pass(run_gates(files))
