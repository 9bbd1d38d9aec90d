"""A rich rendering of a :class:`GateReport` for the terminal."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from backend.gates.runner import GateReport

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
                scan.tool,
                f"[{_STYLE[scan.status]}]{scan.status}[/]",
                str(len(scan.findings)),
                scan.detail or "",
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
                table.add_row(gate.gate, f.tool, f.rule, where, sev, f.message)
        console.print(table)
    if report.removed:
        console.print(f"[dim]suppression files ignored: {', '.join(report.removed)}[/]")
    if report.ignored:
        console.print(f"[dim]not scanned (symlinks/special files): {', '.join(report.ignored)}[/]")
    for gate in report.gates:
        for tool, why in gate.skipped_reasons.items():
            console.print(f"[bold red]not checked:[/] {tool} ({gate.gate}) could not run: {why}")
    colour = "green" if report.verdict == "pass" else "red"
    console.print(f"verdict: [bold {colour}]{report.verdict}[/]")
