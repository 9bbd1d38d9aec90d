"""The gate runner with the REAL scanners on small trees.

Each full run costs a few seconds (semgrep starts slowly), so the reports are built
once per module and several tests read them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from backend.exceptions import PathError
from backend.gates.findings import Finding
from backend.gates.runner import GateReport, run_gates, run_qa, run_secops
from backend.settings import load_settings

from .conftest import write_tree
from .samples import CLEAN_TREE, FAKE_AWS_KEY, PLANTED_TREE


@pytest.fixture(scope="module")
def clean_report(scanners: dict[str, str]) -> GateReport:
    return run_gates(CLEAN_TREE)


@pytest.fixture(scope="module")
def planted_report(scanners: dict[str, str]) -> GateReport:
    return run_gates(PLANTED_TREE)


def found(report: GateReport, tool: str, rule: str, file: str) -> list[int | None]:
    return [f.line for f in report.findings if (f.tool, f.rule, f.file) == (tool, rule, file)]


def test_clean_tree_passes_every_gate_with_every_scanner(clean_report: GateReport) -> None:
    assert clean_report.to_json() == {
        "verdict": "pass",
        "complete": True,
        "gates": [
            {"gate": "qa", "status": "pass", "findings": [], "skipped": [], "skipped_reasons": {}},
            {
                "gate": "secops",
                "status": "pass",
                "findings": [],
                "skipped": [],
                "skipped_reasons": {},
            },
        ],
    }
    ran = {s.tool for g in clean_report.gates for s in g.scans}
    assert ran == {
        "hadolint", "dockerfile", "compose", "terraform",
        "detect-secrets", "secret-regex", "semgrep", "zizmor", "parliament", "iam-floor",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("tool", "rule", "file", "line"),
    [
        ("hadolint", "DL3007", "services/api/Dockerfile", 1),
        ("dockerfile", "dockerfile-latest-tag", "services/api/Dockerfile", 1),
        ("hadolint", "DL3002", "services/api/Dockerfile", 4),
        ("dockerfile", "dockerfile-root-user", "services/api/Dockerfile", 4),
        ("compose", "compose-privileged", "compose.yaml", 4),
        ("compose", "compose-port-all-interfaces", "compose.yaml", 6),
        ("terraform", "terraform-fmt", "deploy/terraform/main.tf", None),
        ("detect-secrets", "AWS Access Key", "config/app.env", 1),
        ("secret-regex", "aws-access-key-id", "config/app.env", 1),
        ("detect-secrets", "Private Key", "config/deploy_key.pem", 1),
        ("semgrep", "gha-pull-request-target", ".github/workflows/triage.yml", 2),
        ("semgrep", "gha-missing-top-level-permissions", ".github/workflows/triage.yml", 6),
        ("semgrep", "gha-event-interpolated-in-run", ".github/workflows/triage.yml", 10),
        ("parliament", "UNKNOWN_ACTION", "deploy/iam/policy.json", 1),
    ],
)
def test_each_planted_problem_is_found_by_its_tool(
    planted_report: GateReport, tool: str, rule: str, file: str, line: int | None
) -> None:
    assert found(planted_report, tool, rule, file) == [line]


def test_a_private_key_is_one_finding_whichever_scanners_saw_it(
    planted_report: GateReport,
) -> None:
    # detect-secrets, the regex floor and semgrep all match it: reported once, at BEGIN
    on_key = [f for f in planted_report.findings if f.file == "config/deploy_key.pem"]
    assert [(f.tool, f.rule, f.line) for f in on_key] == [("detect-secrets", "Private Key", 1)]


def test_planted_tree_requests_changes(planted_report: GateReport) -> None:
    doc: Any = planted_report.to_json()
    assert doc["verdict"] == "changes_requested"
    assert [(g["gate"], g["status"]) for g in doc["gates"]] == [("qa", "fail"), ("secops", "fail")]


def test_clean_policy_with_resource_star_fails(scanners: dict[str, str]) -> None:
    policy = (
        '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", '
        '"Action": ["dynamodb:*", "secretsmanager:GetSecretValue"], "Resource": "*"}]}'
    )
    result = run_secops({"iam/agente.json": policy})
    assert result.status == "fail"
    assert {f.rule for f in result.findings if f.tool == "parliament"} == {"RESOURCE_STAR"}


def test_admin_policy_fails_and_parliament_leaves_no_log(scanners: dict[str, str]) -> None:
    log = Path("/tmp/parliament.log")
    before = log.stat().st_mtime if log.exists() else None
    admin = (
        '{"Version": "2012-10-17", '
        '"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}'
    )
    result = run_secops({"iam/admin.json": admin})
    assert result.status == "fail"
    assert ("iam-floor", "iam-action-star") in {(f.tool, f.rule) for f in result.findings}
    after = log.stat().st_mtime if log.exists() else None
    assert after == before  # the parliament 1.6.4 CLI would have written the policy there


SUPPRESSING_TREE = {
    ".hadolint.yaml": "ignored:\n  - DL3007\n  - DL3002\n",
    "svc/.hadolint.yml": "ignored: [DL3007]\n",
    ".semgrepignore": "*\n.github/\n",
    ".secrets.baseline": '{"version": "1.5.0", "results": {}}\n',
    "svc/Dockerfile": ("# hadolint ignore=DL3007\nFROM python:latest\nUSER 10001\n"),
    ".github/workflows/triage.yml": (
        "name: triage\n"
        "on: [issues]\n"
        "permissions:\n"
        "  contents: read\n"
        "jobs:\n"
        "  label:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        '      - run: echo "${{ github.event.issue.title }}"  # nosemgrep\n'
    ),
    "config/app.env": f"AWS_ACCESS_KEY_ID={FAKE_AWS_KEY}  # pragma: allowlist secret\n",
}


def test_suppressions_in_the_pr_do_not_silence_any_scanner(scanners: dict[str, str]) -> None:
    report = run_gates(SUPPRESSING_TREE)
    assert report.verdict == "changes_requested"
    assert set(report.removed) == {
        ".hadolint.yaml",
        "svc/.hadolint.yml",
        ".semgrepignore",
        ".secrets.baseline",
    }
    assert found(report, "hadolint", "DL3007", "svc/Dockerfile") == [2]
    assert found(
        report, "semgrep", "gha-event-interpolated-in-run", ".github/workflows/triage.yml"
    ) == [9]
    assert found(report, "detect-secrets", "AWS Access Key", "config/app.env") == [1]


def test_scanner_flags_alone_ignore_pragmas(scanners: dict[str, str], tmp_path: Path) -> None:
    """Belt and braces: even on an unstripped tree the adapters' flags defeat the pragmas."""
    from backend.gates.scanners import detect_secrets, hadolint, semgrep
    from backend.gates.scanners._base import ScanContext

    root = write_tree(
        tmp_path, {k: v for k, v in SUPPRESSING_TREE.items() if not k.endswith("/.hadolint.yml")}
    )
    files = tuple(sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()))
    ctx = ScanContext(root=root, files=files, semgrep_bin=scanners["semgrep"])
    assert [f.rule for f in hadolint.scan(ctx).findings] == ["DL3007"]  # type: ignore[union-attr]
    sem = semgrep.scan(ctx)
    assert sem is not None
    assert "gha-event-interpolated-in-run" in {f.rule for f in sem.findings}
    sec = detect_secrets.scan(ctx)
    assert sec is not None
    assert ("config/app.env", 1) in {(f.file, f.line) for f in sec.findings}


def test_run_qa_and_run_secops_separately(scanners: dict[str, str]) -> None:
    tree = {
        "Dockerfile": "FROM python:3.12-slim\nUSER 10001\n",
        "notes.txt": f"key {FAKE_AWS_KEY}\n",
    }
    qa = run_qa(tree)
    assert (qa.gate, qa.status) == ("qa", "pass")
    secops = run_secops(tree)
    assert (secops.gate, secops.status) == ("secops", "fail")


def test_directory_source_and_relative_paths(scanners: dict[str, str], tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {"deep/er/Dockerfile": "FROM alpine\nUSER 10001\n"})
    result = run_qa(root)
    assert {(f.rule, f.file) for f in result.findings} >= {
        ("dockerfile-untagged-image", "deep/er/Dockerfile")
    }
    assert root.joinpath("deep/er/Dockerfile").read_text() == "FROM alpine\nUSER 10001\n"


def test_bad_paths_are_rejected_before_any_scan(scanners: dict[str, str]) -> None:
    for bad in ("/etc/passwd", "../x/Dockerfile", ".git/hooks/post-checkout"):
        with pytest.raises(PathError):
            run_gates({"ok.txt": "x", bad: "FROM a:1\n"})


def test_missing_semgrep_is_skipped_and_not_a_pass(
    scanners: dict[str, str], tmp_path: Path
) -> None:
    settings = load_settings(semgrep_bin=str(tmp_path / "no-semgrep"))
    result = run_secops(
        {".github/workflows/ci.yml": CLEAN_TREE[".github/workflows/ci.yml"]}, settings
    )
    assert result.status == "skipped"
    assert result.skipped == ["semgrep"]
    assert result.to_json()["skipped"] == ["semgrep"]
    report = run_gates({"README.md": "hi\n"}, settings)
    assert report.verdict == "changes_requested"


def test_missing_hadolint_is_skipped(
    scanners: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from backend.gates.scanners import hadolint

    monkeypatch.setattr(hadolint, "find_binary", lambda *a, **k: None)
    result = run_qa({"Dockerfile": "FROM python:3.12-slim\nUSER 10001\n"})
    assert result.status == "skipped"
    assert result.skipped == ["hadolint"]


def test_a_timeout_is_skipped_not_passed(scanners: dict[str, str]) -> None:
    result = run_secops({"Dockerfile": "FROM python:3.12-slim\nUSER 10001\n"}, timeout_s=0.01)
    assert result.status == "skipped"
    by_tool = {s.tool: s for s in result.scans}
    assert by_tool["semgrep"].status == "skipped"
    assert "timed out" in (by_tool["semgrep"].detail or "")


def test_ignore_files_and_default_ignored_dirs_hide_nothing(scanners: dict[str, str]) -> None:
    """.gitignore, and semgrep's default ignores (tests/, node_modules/), must not hide files."""
    tree = {
        ".gitignore": "*.env\ntests/\n",
        "secret.env": f"K={FAKE_AWS_KEY}\n",
        "tests/compose.yaml": (
            "services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: hunter2hunter2\n"
        ),
        "node_modules/x/.github/workflows/ci.yml": "on: pull_request_target\njobs: {}\n",
    }
    report = run_secops(tree)
    assert found_in(report.findings, "detect-secrets", "AWS Access Key", "secret.env") == [1]
    assert found_in(
        report.findings, "semgrep", "hardcoded-credential-assignment", "tests/compose.yaml"
    ) == [4]
    assert found_in(
        report.findings,
        "semgrep",
        "gha-pull-request-target",
        "node_modules/x/.github/workflows/ci.yml",
    ) == [1]


def found_in(findings: list[Finding], tool: str, rule: str, file: str) -> list[int | None]:
    return [f.line for f in findings if (f.tool, f.rule, f.file) == (tool, rule, file)]
