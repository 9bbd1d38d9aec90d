"""GitHub Actions evasions: expression forms beyond ``github.event.x``, and zizmor.

One real secops run over a few workflow files (semgrep and zizmor start once each);
the tests read that one report.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.gates.findings import Finding
from backend.gates.runner import GateResult, run_secops
from backend.gates.scanners import zizmor
from backend.gates.scanners._base import ScanContext

# Every step here interpolates something an attacker controls into code.
INJECTIONS = """\
name: triage
on: [issues, pull_request]
permissions: {}
jobs:
  triage:
    runs-on: ubuntu-latest
    steps:
      - run: echo "${{ github.event['pull_request']['title'] }}"
      - run: echo '${{ toJSON(github) }}'
      - run: echo "${{ format('{0}', github.event.issue.body) }}"
      - run: echo ${{ GitHub.Head_Ref }}
      - run: echo "${{ github['head_ref'] }}"
      - uses: actions/github-script@60a0d83039c74a4aee543508d2ffcb1c3799cdea  # v7.0.1
        with:
          script: console.log("${{ github.event.issue.title }}")
      - run: echo "${{ github.sha }} ${{ github.event_name }}"
"""

# Indirection through env: only zizmor follows the value into the script.
INDIRECT = """\
name: indirect
on: [pull_request]
permissions: {}
jobs:
  a:
    runs-on: ubuntu-latest
    env:
      TITLE: ${{ github.event.pull_request.title }}
    steps:
      - run: echo ${{ env.TITLE }} # zizmor: ignore[template-injection]
"""

# Inline ignores and the PR's own zizmor.yml must not silence anything.
PR_ZIZMOR_CONFIG = "rules:\n  template-injection:\n    disable: true\n"

ACTION = """\
name: greet
runs:
  using: composite
  steps:
    - run: echo "${{ github.event.comment.body }}"
      shell: bash
"""

CLEAN = """\
name: ci
on: [push, pull_request]
permissions:
  contents: read
jobs:
  test:
    runs-on: ubuntu-24.04
    steps:
      - uses: actions/checkout@v4
        with:
          persist-credentials: false
      - env:
          TITLE: ${{ github.event.pull_request.title }}
        run: echo "testing $TITLE"
"""

TREE = {
    ".github/workflows/triage.yml": INJECTIONS,
    ".github/workflows/indirect.yaml": INDIRECT,
    ".github/workflows/ci.yml": CLEAN,
    ".github/workflows/broken.yml": "on: [push\n",
    ".github/zizmor.yml": PR_ZIZMOR_CONFIG,
    "zizmor.yml": PR_ZIZMOR_CONFIG,
    ".github/actions/greet/action.yml": ACTION,
    # Not an action (no runs:), not a workflow (not directly under .github/workflows).
    "deploy/action.yml": "action: restart\n",
    ".github/workflows/templates/t.yml": "not: a workflow\n",
}


@pytest.fixture(scope="module")
def secops(scanners: dict[str, str]) -> GateResult:
    return run_secops(TREE)


def lines(findings: list[Finding], tool: str, rule: str, file: str) -> list[int | None]:
    return sorted(f.line or 0 for f in findings if (f.tool, f.rule, f.file) == (tool, rule, file))


def test_semgrep_sees_every_expression_form(secops: GateResult) -> None:
    file = ".github/workflows/triage.yml"
    assert lines(secops.findings, "semgrep", "gha-event-interpolated-in-run", file) == [
        8, 9, 10, 11, 12, 15,
    ]  # fmt: skip


def test_zizmor_runs_offline_and_catches_injection_everywhere(secops: GateResult) -> None:
    assert "zizmor" in {s.tool for s in secops.scans}
    assert secops.status == "fail"
    found = secops.findings
    triage = lines(found, "zizmor", "template-injection", ".github/workflows/triage.yml")
    assert {8, 9, 10, 11, 12, 15} <= set(triage)
    assert 16 not in triage  # github.sha and github.event_name are not attacker-controlled
    # env indirection, despite the inline ignore and the PR's zizmor.yml
    indirect = [
        f
        for f in found
        if (f.tool, f.rule, f.file)
        == ("zizmor", "template-injection", ".github/workflows/indirect.yaml")
    ]
    assert [f.line for f in indirect] == [10]
    assert all(f.blocking for f in indirect)
    assert lines(found, "zizmor", "template-injection", ".github/actions/greet/action.yml") == [5]


def test_zizmor_reports_what_it_cannot_read_and_nothing_on_clean_files(
    secops: GateResult,
) -> None:
    by_file = {f.file for f in secops.findings if f.tool == "zizmor"}
    assert ".github/workflows/ci.yml" not in by_file
    assert "deploy/action.yml" not in by_file
    assert ".github/workflows/templates/t.yml" not in by_file
    (unreadable,) = [f for f in secops.findings if f.rule == "zizmor-unreadable"]
    assert unreadable.file == ".github/workflows/broken.yml"
    assert unreadable.blocking


def test_missing_zizmor_is_skipped_not_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(zizmor, "find_binary", lambda *a, **k: None)
    result = zizmor.scan(ScanContext(root=tmp_path, files=(".github/workflows/ci.yml",)))
    assert result is not None
    assert result.status == "skipped"
    assert "zizmor not installed" in (result.detail or "")
