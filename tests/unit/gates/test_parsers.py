"""Scanner output parsing and gate aggregation, on canned tool output."""

from __future__ import annotations

import json
from typing import Any

import pytest

from backend.gates.findings import Finding, ScanResult
from backend.gates.runner import GateReport, GateResult
from backend.gates.scanners import detect_secrets, hadolint, parliament, semgrep, terraform
from backend.gates.scanners._base import ToolFailed
from backend.gates.state import GateEvent


def test_hadolint_levels_map_and_info_does_not_fail() -> None:
    out = json.dumps(
        [
            {"code": "DL3008", "level": "info", "line": 3, "file": "Dockerfile", "message": "pin"},
            {"code": "DL3059", "level": "style", "line": 4, "file": "Dockerfile", "message": "s"},
        ]
    )
    found = hadolint.parse(out)
    assert [f.severity for f in found] == ["info", "info"]
    assert ScanResult.from_findings("hadolint", found).status == "pass"
    found = hadolint.parse(
        json.dumps([{"code": "DL3007", "level": "error", "line": 1, "file": "D", "message": "m"}])
    )
    assert ScanResult.from_findings("hadolint", found).status == "fail"


def test_hadolint_cannot_parse_is_advice_not_a_block() -> None:
    out = json.dumps(
        [
            {"code": "DL1000", "level": "error", "line": 5, "file": "Dockerfile",
             "message": "unexpected 'C'\nexpecting a new line"},
        ]
    )  # fmt: skip
    found = hadolint.parse(out)
    assert [(f.rule, f.line, f.severity) for f in found] == [("DL1000", 5, "info")]
    assert "unexpected 'C'" in found[0].message
    assert "built-in Dockerfile checks" in found[0].message
    assert ScanResult.from_findings("hadolint", found).status == "pass"


@pytest.mark.parametrize("out", ["", "not json", "{}"])
def test_hadolint_garbage_is_not_a_pass(out: str) -> None:
    with pytest.raises(ToolFailed):
        hadolint.parse(out, "boom")


def test_detect_secrets_parse_and_refuses_allowlist_filter() -> None:
    doc: dict[str, Any] = {
        "filters_used": [{"path": "detect_secrets.filters.heuristic.is_lock_file"}],
        "results": {"app.env": [{"type": "AWS Access Key", "line_number": 2}]},
    }
    (f,) = detect_secrets.parse(json.dumps(doc))
    assert (f.file, f.line, f.rule, f.severity) == ("app.env", 2, "AWS Access Key", "error")
    doc["filters_used"].append({"path": detect_secrets.ALLOWLIST_FILTER})
    with pytest.raises(ToolFailed):
        detect_secrets.parse(json.dumps(doc))


def test_semgrep_parse_results_and_errors() -> None:
    doc = {
        "results": [
            {
                "check_id": "tmp.rules.semgrep.gha-pull-request-target",
                "path": ".github/workflows/ci.yml",
                "start": {"line": 2},
                "extra": {"severity": "ERROR", "message": "use   pull_request"},
            }
        ],
        "errors": [
            {
                "level": "warn",
                "type": "Syntax error",
                "path": "bad.yml",
                "spans": [{"start": {"line": 7}}],
            }
        ],
    }
    found = semgrep.parse(json.dumps(doc))
    assert [(f.rule, f.file, f.line, f.severity) for f in found] == [
        ("gha-pull-request-target", ".github/workflows/ci.yml", 2, "error"),
        ("semgrep-parse-error", "bad.yml", 7, "warning"),
    ]
    assert found[0].message == "use pull_request"
    with pytest.raises(ToolFailed):
        semgrep.parse(
            json.dumps({"results": [], "errors": [{"level": "error", "message": "bad rule"}]})
        )
    with pytest.raises(ToolFailed):
        semgrep.parse("")


def test_semgrep_skipped_targets_block_once_per_file() -> None:
    doc = {
        "results": [],
        "errors": [{"level": "warn", "type": "Syntax error", "path": "bad.yml"}],
        "paths": {
            "scanned": ["ok.yml"],
            "skipped": [
                {"path": "big/Dockerfile", "reason": "exceeded_size_limit"},
                {"path": "bad.yml", "reason": "analysis_failed_parser_or_internal_error"},
            ],
        },
    }
    found = semgrep.parse(json.dumps(doc))
    assert [(f.rule, f.file, f.severity) for f in found] == [
        ("semgrep-parse-error", "bad.yml", "warning"),
        ("semgrep-skipped-target", "big/Dockerfile", "warning"),
    ]
    assert "exceeded_size_limit" in found[1].message
    with pytest.raises(ToolFailed):  # a skip that names no file cannot be reported on one
        semgrep.parse(json.dumps({"results": [], "paths": {"skipped": [{"reason": "x"}]}}))


def test_parliament_unknown_action_is_an_error_and_low_still_fails() -> None:
    lines = [
        {
            "issue": "UNKNOWN_ACTION",
            "title": "Unknown action",
            "severity": "LOW",
            "detail": "s3:GetObjectt",
            "location": {"filepath": "iam/policy.json", "line": 1},
        },
        {
            "issue": "RESOURCE_STAR",
            "title": "Unnecessary use of Resource *",
            "severity": "LOW",
            "detail": ["a", "b", "c", "d", "e", "f"],
            "location": {"filepath": "iam/policy.json", "line": 1},
        },
    ]
    found = parliament.parse("\n".join(json.dumps(x) for x in lines))
    assert [(f.rule, f.severity) for f in found] == [
        ("UNKNOWN_ACTION", "error"),
        ("RESOURCE_STAR", "warning"),
    ]
    assert found[1].message.endswith("...")
    assert parliament.parse("") == []
    with pytest.raises(ToolFailed):
        parliament.parse("Traceback (most recent call last):")


def test_terraform_parse_listing_and_errors() -> None:
    stderr = 'Error: Unclosed configuration block\n\n  on bad.tf line 1, in resource "x":\n'
    found = terraform.parse("main.tf\n", stderr)
    assert [(f.rule, f.file, f.line) for f in found] == [
        ("terraform-fmt", "main.tf", None),
        ("terraform-syntax", "bad.tf", 1),
    ]
    assert terraform.parse("", "Warning: something\n") == []
    mixed = terraform.parse("bad.tf\n", stderr)  # same file, line None and 1: still sortable
    assert [f.rule for f in ScanResult.from_findings("terraform", mixed).findings] == [
        "terraform-fmt",
        "terraform-syntax",
    ]


def _scan(tool: str, status: str) -> ScanResult:
    if status == "skipped":
        return ScanResult.skipped(tool, "missing")
    findings = [Finding("f", 1, tool, "r", "error", "m")] if status == "fail" else []
    return ScanResult.from_findings(tool, findings)


@pytest.mark.parametrize(
    ("statuses", "gate_status"),
    [
        ((), "pass"),
        (("pass", "pass"), "pass"),
        (("pass", "skipped"), "skipped"),
        (("skipped", "skipped"), "skipped"),
        (("fail", "skipped"), "fail"),
        (("pass", "fail"), "fail"),
    ],
)
def test_gate_status_aggregation(statuses: tuple[str, ...], gate_status: str) -> None:
    gate = GateResult("qa", tuple(_scan(f"t{i}", s) for i, s in enumerate(statuses)))
    assert gate.status == gate_status
    assert gate.passed is (gate_status == "pass")
    assert gate.skipped == [f"t{i}" for i, s in enumerate(statuses) if s == "skipped"]


def test_verdict_and_json_shape() -> None:
    ok = GateResult("qa", (_scan("hadolint", "pass"),))
    skipped = GateResult("secops", (_scan("semgrep", "skipped"), _scan("detect-secrets", "pass")))
    failed = GateResult("secops", (_scan("semgrep", "fail"),))
    assert GateReport((ok, GateResult("secops", ()))).verdict == "pass"
    assert GateReport((ok, skipped)).verdict == "changes_requested"
    report = GateReport((ok, failed))
    assert report.verdict == "changes_requested"
    doc: Any = report.to_json()
    assert doc == {
        "verdict": "changes_requested",
        "complete": True,
        "gates": [
            {"gate": "qa", "status": "pass", "findings": [], "skipped": [], "skipped_reasons": {}},
            {
                "gate": "secops",
                "status": "fail",
                "findings": [
                    {
                        "tool": "semgrep",
                        "rule": "r",
                        "file": "f",
                        "line": 1,
                        "severity": "error",
                        "message": "m",
                    }
                ],
                "skipped": [],
                "skipped_reasons": {},
            },
        ],
    }
    incomplete: Any = GateReport((ok, skipped)).to_json()
    assert incomplete["complete"] is False
    assert incomplete["gates"][1]["skipped_reasons"] == {"semgrep": "missing"}
    assert list(doc["gates"][1]["findings"][0]) == [
        "tool",
        "rule",
        "file",
        "line",
        "severity",
        "message",
    ]  # type: ignore[index]
    assert GateReport(()).verdict == "changes_requested"


def test_verdict_event_mapping() -> None:
    from backend.gates.verdicts import verdict_event

    assert verdict_event(GateResult("qa", (_scan("hadolint", "pass"),))) == GateEvent.qa(True)
    event = verdict_event(GateResult("secops", (_scan("semgrep", "fail"),)))
    assert event is not None
    assert event.kind == "secops_verdict"
    assert event.passed is False
    assert event.reason == "1 blocking finding(s): semgrep:r f:1"
    assert verdict_event(GateResult("secops", (_scan("semgrep", "skipped"),))) is None
