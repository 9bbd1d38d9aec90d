"""A rich rendering of a :class:`GateReport` for the terminal.

File names, messages and notes come from the scanned files (a PR's author chose them):
they are shown through :mod:`console.inert`, as ``Text`` or escaped, never as markup or
raw escape sequences.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from backend.gates.runner import GateReport
from console.inert import inert, inert_text

_STYLE = {"pass": "green", "fail": "red", "skipped": "yellow", "error": "red", "warning": "yellow"}


def render_report(report: GateReport, console: Console) -> None:
    """Print one table of gates and scanners, then the findings, then the verdict."""
    gates = Table(title="Gates", show_lines=False)
    for column in ("gate", "scanner", "status", "findings", "note"):
        gates.add_column(column)
    for gate in report.gates:
        gate_status = f"[{_STYLE[gate.status]}]{gate.status}[/]"
        gates.add_row(gate.gate, "", gate_status, str(len(gate.findings)), "")
        for scan in gate.scans:
            gates.add_row(
                "",
                inert_text(scan.tool),
                f"[{_STYLE[scan.status]}]{scan.status}[/]",
                str(len(scan.findings)),
                inert_text(scan.detail, multiline=True),
            )
    console.print(gates)
    if report.findings:
        table = Table(title="Findings")
        for column in ("gate", "tool", "rule", "file:line", "severity", "message"):
            table.add_column(column, overflow="fold")
        for gate in report.gates:
            for f in gate.findings:
                where = f"{f.file}:{f.line}" if f.line is not None else f.file
                sev = f"[{_STYLE.get(f.severity, 'dim')}]{f.severity}[/]"
                table.add_row(
                    gate.gate,
                    inert_text(f.tool),
                    inert_text(f.rule),
                    inert_text(where),
                    sev,
                    inert_text(f.message, multiline=True),
                )
        console.print(table)
    if report.removed:
        console.print(f"[dim]suppression files ignored: {_shown(', '.join(report.removed))}[/]")
    if report.ignored:
        ignored = _shown(", ".join(report.ignored))
        console.print(f"[dim]not scanned (symlinks/special files): {ignored}[/]")
    for gate in report.gates:
        for tool, why in gate.skipped_reasons.items():
            console.print(
                f"[bold red]not checked:[/] {_shown(tool)} ({gate.gate}) could not run: "
                f"{_shown(why)}"
            )
    colour = "green" if report.verdict == "pass" else "red"
    console.print(f"verdict: [bold {colour}]{report.verdict}[/]")


def _shown(text: str) -> str:
    return escape(inert(text))
