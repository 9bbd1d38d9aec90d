"""One finding per secret across the SecOps scanners (:func:`merge_duplicates`, pure)."""

from __future__ import annotations

from backend.gates.findings import Finding, ScanResult
from backend.gates.scanners.secret_noise import merge_duplicates


def _f(tool: str, rule: str, file: str = "deploy/tls.key", line: int = 1) -> Finding:
    return Finding(file=file, line=line, tool=tool, rule=rule, severity="error", message="m")


def test_a_private_key_seen_by_three_scanners_is_reported_once_by_the_first() -> None:
    outcomes = [
        (
            "secops",
            ScanResult.from_findings("detect-secrets", [_f("detect-secrets", "Private Key")]),
        ),
        ("secops", ScanResult.from_findings("secret-regex", [_f("secret-regex", "private-key")])),
        ("secops", ScanResult.from_findings("semgrep", [_f("semgrep", "private-key-block")])),
    ]
    merged = merge_duplicates(outcomes)
    found = [(f.tool, f.line) for _, r in merged if r is not None for f in r.findings]
    assert found == [("detect-secrets", 1)]
    assert [r.status for _, r in merged if r is not None] == ["fail", "pass", "pass"]


def test_without_detect_secrets_the_floor_keeps_the_key() -> None:
    outcomes = [
        ("secops", ScanResult.skipped("detect-secrets", "not installed")),
        ("secops", ScanResult.from_findings("secret-regex", [_f("secret-regex", "private-key")])),
        ("secops", ScanResult.from_findings("semgrep", [_f("semgrep", "private-key-block")])),
    ]
    merged = merge_duplicates(outcomes)
    found = [(f.tool, f.rule) for _, r in merged if r is not None for f in r.findings]
    assert found == [("secret-regex", "private-key")]
    first = merged[0][1]
    assert first is not None
    assert first.status == "skipped"


def test_other_keys_other_lines_and_other_rules_are_kept() -> None:
    outcomes = [
        (
            "secops",
            ScanResult.from_findings(
                "detect-secrets",
                [
                    _f("detect-secrets", "Private Key"),
                    _f("detect-secrets", "AWS Access Key", "a.env"),
                ],
            ),
        ),
        (
            "secops",
            ScanResult.from_findings(
                "secret-regex",
                [
                    _f("secret-regex", "private-key", line=30),  # a second key in the file
                    _f("secret-regex", "aws-access-key-id", "a.env"),  # not merged
                ],
            ),
        ),
        ("qa", None),
    ]
    merged = merge_duplicates(outcomes)
    found = sorted((f.tool, f.rule, f.line) for _, r in merged if r is not None for f in r.findings)
    assert found == [
        ("detect-secrets", "AWS Access Key", 1),
        ("detect-secrets", "Private Key", 1),
        ("secret-regex", "aws-access-key-id", 1),
        ("secret-regex", "private-key", 30),
    ]
    assert merged[2] == ("qa", None)
