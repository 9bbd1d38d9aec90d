"""``cadencia gate``'s table shows what a PR's files say inert: a file name or a scanner
message carrying escape sequences or Rich markup is printed as text, never obeyed."""

from __future__ import annotations

import io

from rich.console import Console

from backend.gates.findings import Finding, ScanResult
from backend.gates.render import render_report
from backend.gates.runner import GateReport, GateResult

NAME = "Dockerfile\x1b]0;pwned\x07[bold]x[/bold]"


def test_gate_report_prints_file_names_and_messages_inert() -> None:
    finding = Finding(NAME, 3, "hadolint", "DL3007", "error", "see \x1b[2J[link=x]here[/link]")
    report = GateReport(
        gates=(GateResult("qa", (ScanResult("hadolint", "fail", (finding,), NAME),)),),
        removed=(NAME,),
    )
    out = io.StringIO()
    render_report(report, Console(file=out, width=400, color_system=None))
    printed = out.getvalue()
    assert "\x1b" not in printed
    assert "\x07" not in printed
    assert "Dockerfile␛]0;pwned␇[bold]x[/bold]:3" in printed
    assert "see ␛[2J[link=x]here[/link]" in printed
    assert "suppression files ignored: Dockerfile␛]0;pwned␇[bold]x[/bold]" in printed
