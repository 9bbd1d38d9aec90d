"""Finding ids (fingerprints) and how waived ids stop blocking a verdict (pure)."""

from __future__ import annotations

from pathlib import Path

from backend.gates.findings import Finding, ScanResult, fingerprint, with_fingerprints
from backend.gates.runner import GateResult
from backend.gates.verdicts import effective_status, verdict_event


def _finding(line: int) -> Finding:
    return Finding("app.env", line, "semgrep", "hardcoded-credential-assignment", "error", "m")


def test_the_id_survives_moved_lines_and_reindenting_but_not_an_edit(tmp_path: Path) -> None:
    (tmp_path / "app.env").write_text("A=1\nPASSWORD=demo-demo-demo\n")
    before = with_fingerprints(ScanResult.from_findings("semgrep", [_finding(2)]), tmp_path)
    (tmp_path / "app.env").write_text("# new\nA=1\n\n   PASSWORD=demo-demo-demo  \n")
    moved = with_fingerprints(ScanResult.from_findings("semgrep", [_finding(4)]), tmp_path)
    (tmp_path / "app.env").write_text("A=1\nPASSWORD=other-other-other\n")
    edited = with_fingerprints(ScanResult.from_findings("semgrep", [_finding(2)]), tmp_path)
    ids = [r.findings[0].fingerprint for r in (before, moved, edited)]
    assert ids[0] == ids[1] != ids[2]
    assert ids[0] == fingerprint(
        "semgrep", "hardcoded-credential-assignment", "app.env", "PASSWORD=demo-demo-demo"
    )
    assert before.findings[0].to_json()["id"] == ids[0]


def test_waived_ids_stop_blocking_but_a_skipped_scanner_still_does(tmp_path: Path) -> None:
    (tmp_path / "app.env").write_text("PASSWORD=demo-demo-demo\n")
    scan = with_fingerprints(ScanResult.from_findings("semgrep", [_finding(1)]), tmp_path)
    waived = {scan.findings[0].fingerprint or ""}
    failed = GateResult("secops", (scan,))
    assert effective_status(failed) == "fail"
    event = verdict_event(failed, waived)
    assert event is not None
    assert event.passed
    skipped = GateResult("secops", (scan, ScanResult.skipped("detect-secrets", "missing")))
    assert effective_status(skipped, waived) == "skipped"
    assert verdict_event(skipped, waived) is None
    assert verdict_event(failed, {"f_other"}) == verdict_event(failed)
