"""The infra PR path end to end with the REAL scanners (hadolint, detect-secrets, semgrep).

Semgrep costs seconds per run, so the flows share runs: the planted-problem flow runs
SecOps once (after the corrected QA pass); the suppression test once; the PostgreSQL flow
once. Missing scanners skip locally and FAIL with ``CI=true``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_pipeline_support import BRANCH, CLEAN_FILES, make_world, planted, require_scanners

from backend.agents.infra_tools import InfraAgentTools, validate_infra_file
from backend.gates.scanners import _base
from backend.planner import plan
from backend.prs.pipeline import InfraPipeline
from backend.store.db import Database

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "repos"


@pytest.fixture(autouse=True)
def _scanners() -> None:
    require_scanners()


def test_planted_problem_is_corrected_on_the_same_pr_then_approved(
    sqlite_db: Database, tmp_path: Path
) -> None:
    world = make_world(sqlite_db, tmp_path, sample="python-api")
    files = planted(plan(world.repo.repo_path))
    pr = world.propose(files).artifact.pr_action_id

    art = world.pipeline.run_gates(pr)

    assert art.gate_status == "changes_requested"
    rules = {(f["tool"], f["rule"]) for f in art.findings}
    assert {("hadolint", "DL3007"), ("hadolint", "DL3002")} <= rules, rules
    assert all(f["gate"] == "qa" for f in art.findings)
    qa = world.of_type("artifact.qa_verdict")
    assert [(e.payload["verdict"], e.payload["gate_status"]) for e in qa] == [
        ("fail", "changes_requested")
    ]
    assert world.of_type("artifact.secops_verdict") == []  # SecOps waits for a QA pass

    corrected = world.pipeline.correct(pr)

    assert corrected.status == "corrected"
    assert corrected.artifact.pr_action_id == pr
    assert world.commits_on_branch() == 2
    fixed = world.git("show", f"{BRANCH}:Dockerfile")
    assert "python:latest" not in fixed
    assert "USER root" not in fixed
    art = world.pipeline.run_gates(pr)
    assert art.gate_status == "awaiting_human", art.findings
    assert [a.pr_action_id for a in world.pipeline.in_review()] == [pr]
    secops = world.of_type("artifact.secops_verdict")
    assert [e.payload["verdict"] for e in secops] == ["pass"]

    world.pipeline.approve(pr, "alice")
    assert "python:latest" not in world.git("show", "main:Dockerfile")
    assert set(files) <= set(world.git("ls-tree", "-r", "--name-only", "main").split())
    moves = [
        (e.payload["from_status"], e.payload["gate_status"])
        for e in world.of_type("infra.gate_changed")
    ]
    assert moves == [
        ("awaiting_qa", "changes_requested"),
        ("changes_requested", "awaiting_qa"),
        ("awaiting_qa", "awaiting_secops"),
        ("awaiting_secops", "awaiting_human"),
        ("awaiting_human", "merged"),
    ]


def test_qa_suppressions_in_the_pr_do_not_silence_hadolint(
    sqlite_db: Database, tmp_path: Path
) -> None:
    world = make_world(sqlite_db, tmp_path)
    files = {
        "Dockerfile": "# hadolint ignore=DL3007,DL3002\nFROM python:latest\nUSER root\n",
        ".hadolint.yaml": "ignored:\n  - DL3007\n  - DL3002\nfailure-threshold: none\n",
    }
    pr = world.propose(files).artifact.pr_action_id

    art = world.pipeline.run_gates(pr)

    assert art.gate_status == "changes_requested"
    assert {"DL3007", "DL3002"} <= {f["rule"] for f in art.findings}


def test_secops_suppressions_in_the_pr_do_not_silence_the_scanners(
    sqlite_db: Database, tmp_path: Path
) -> None:
    world = make_world(sqlite_db, tmp_path)
    key = "AKIA" + "Q3EGRBLZ7WXN2TPD"
    files = {
        **CLEAN_FILES,
        ".github/workflows/ci.yml": (
            "name: ci\non:\n  pull_request_target:  # nosemgrep\n"
            "jobs:\n  t:\n    runs-on: ubuntu-24.04\n    steps:\n"
            "      - run: echo ${{ github.event.pull_request.title }}  # nosemgrep\n"
        ),
        "config/settings.env": f"AWS_ACCESS_KEY_ID={key}  # pragma: allowlist secret\n",
        ".semgrepignore": "*\n",
        ".secrets.baseline": "{}\n",
    }
    pr = world.propose(files).artifact.pr_action_id

    art = world.pipeline.run_gates(pr)

    assert art.gate_status == "changes_requested"
    secops = [f for f in art.findings if f["gate"] == "secops"]
    found = {(f["tool"], f["rule"], f["file"]) for f in secops}
    # `# pragma: allowlist secret` does not hide the key from detect-secrets itself...
    assert ("detect-secrets", "AWS Access Key", "config/settings.env") in found, found
    # ...and neither `# nosemgrep` nor `.semgrepignore` silences semgrep.
    workflow = ".github/workflows/ci.yml"
    assert ("semgrep", "gha-pull-request-target", workflow) in found, found
    assert ("semgrep", "gha-event-interpolated-in-run", workflow) in found, found
    verdicts = world.of_type("artifact.secops_verdict")
    assert [e.payload["verdict"] for e in verdicts] == ["fail"]


def test_full_flow_on_postgres_in_background_with_auto_correction(
    pg_db: Database, tmp_path: Path
) -> None:
    world = make_world(pg_db, tmp_path, sample="python-api", auto=True)
    files = planted(plan(world.repo.repo_path))

    result = world.propose(files)  # auto: the gates start in the background
    pr = result.artifact.pr_action_id
    world.pipeline.wait_gates(300)

    art = world.pipeline.get(pr)
    assert art.gate_status == "awaiting_human", art.findings
    assert art.gate_correction_count == 1
    assert world.commits_on_branch() == 2
    assert len(world.of_type("infra.pr_opened")) == 1
    assert [e.payload["correction"] for e in world.of_type("infra.pr_corrected")] == [1]
    merged = world.pipeline.approve(pr, "alice")
    assert merged.gate_status == "merged"
    assert "USER root" not in world.git("show", "main:Dockerfile")


def test_a_failing_background_run_is_recorded_as_an_event(
    sqlite_db: Database, tmp_path: Path
) -> None:
    world = make_world(sqlite_db, tmp_path)
    pipeline = InfraPipeline(
        world.store, world.settings.model_copy(update={"gate_max_attempts": 1})
    )
    pr = world.propose().artifact.pr_action_id
    shutil.rmtree(world.repo.repo_path)  # the files can no longer be read back

    job = pipeline.jobs.get(pipeline.start_gates(pr))
    assert job is not None
    pipeline.wait_gates(60)  # no workers here: the job runs in this thread, and raises

    assert pipeline.jobs.wait(job.id, 1).state == "dead"
    failed = world.of_type("infra.pr_failed")
    assert failed
    assert failed[-1].payload["pr_action_id"] == pr
    assert failed[-1].payload["error"].startswith("gate run failed")
    assert world.pipeline.get(pr).gate_status == "awaiting_qa"


def test_validate_infra_file_runs_hadolint_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = validate_infra_file("services/api/Dockerfile", "FROM python:latest\nUSER root\n")
    assert bad["status"] == "fail"
    assert bad["tool"] == "hadolint+dockerfile"
    assert {"DL3007", "DL3002"} <= {f["rule"] for f in bad["findings"]}
    assert {f["file"] for f in bad["findings"]} == {"services/api/Dockerfile"}
    good = validate_infra_file("Dockerfile", CLEAN_FILES["Dockerfile"])
    assert good["status"] == "pass", good
    compose = validate_infra_file(
        "compose.yaml", "services:\n  a:\n    image: x:1\n    privileged: true\n"
    )
    assert compose["status"] == "fail"

    monkeypatch.setattr("backend.agents.infra_tools.find_binary", lambda *a, **k: None)
    # a file the built-in checks pass: without hadolint it is not a pass but "skipped"
    # (with one they fail, "fail" wins, as in the gate)
    skipped = validate_infra_file("Dockerfile", CLEAN_FILES["Dockerfile"])
    assert skipped["status"] == "skipped"
    assert validate_infra_file("Dockerfile", "FROM python:latest\n")["status"] == "fail"
    assert "hadolint" in skipped["detail"]
    assert _base.find_binary("hadolint") is not None  # only the agent's lookup was removed


def test_plan_and_propose_reads_the_module_map(sqlite_db: Database, tmp_path: Path) -> None:
    module_map = {
        "modules": [{"name": "api", "path": ".", "language": "python", "kind": "web", "port": 8000}]
    }
    world = make_world(sqlite_db, tmp_path, sample="python-api", module_map=module_map)

    turn = InfraAgentTools(world.pipeline).plan_and_propose(world.project.id, world.session_id)

    assert turn["proposal"]["status"] == "opened"
    assert all(v["status"] == "pass" for v in turn["validations"]), turn["validations"]
    paths = {v["path"] for v in turn["validations"]}
    assert {"Dockerfile", "compose.yaml", ".github/workflows/ci.yml"} <= paths
    assert world.commits_on_branch() == 1
    assert "api:" in world.git("show", f"{BRANCH}:compose.yaml")


def test_validate_infra_file_sees_what_the_gate_s_dockerfile_checks_fail() -> None:
    """An unverified download (a rule of the gate's own Dockerfile checks, not hadolint's) is
    reported to the agent before it proposes; the same download verified passes."""
    head = "FROM debian:12.5-slim\nRUN apt-get update && apt-get install -y curl\n"
    unverified = head + "RUN curl -fsSL https://example.com/install.sh | sh\nUSER 10001\n"
    verified = head + (
        "RUN curl -fsSLo /tmp/tool.tgz https://example.com/tool.tgz \\\n"
        ' && echo "93dcc18adc78c65a028a84799ecf8ad40c936fdfc5f2a57b1acda5a8117fa82c  '
        '/tmp/tool.tgz" | sha256sum -c - \\\n'
        " && tar -xzf /tmp/tool.tgz -C /usr/local/bin\nUSER 10001\n"
    )
    bad = validate_infra_file("Dockerfile", unverified)
    assert bad["status"] == "fail"
    assert "dockerfile-unverified-download" in {f["rule"] for f in bad["findings"]}
    good = validate_infra_file("Dockerfile", verified)
    assert "dockerfile-unverified-download" not in {f["rule"] for f in good["findings"]}, good
