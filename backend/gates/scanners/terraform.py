"""``terraform fmt -check`` when the copy has Terraform files.

``-list=true`` prints one unformatted file per line; that listing (and any
``Error:`` block on stderr, e.g. a syntax error) is what decides, not the exit code.
"""

from __future__ import annotations

import re
from pathlib import Path

from backend.gates.findings import Finding, ScanResult
from backend.gates.scanners._base import ScanContext, ToolFailed, find_binary, run_tool, tail
from backend.gates.targets import is_terraform

TOOL = "terraform"
_LOCATION = re.compile(r"on (?P<file>\S+) line (?P<line>\d+)")


def command(binary: str) -> list[str]:
    """The exact command line (the benchmark runs it directly too)."""
    return [binary, "fmt", "-check", "-list=true", "-recursive", "-no-color", "--", "."]


def scan(ctx: ScanContext) -> ScanResult | None:
    """Check formatting of every Terraform file; ``None`` when there is none."""
    if not any(is_terraform(f) for f in ctx.files):
        return None
    binary = find_binary(TOOL, Path("/usr/local/bin/terraform"))
    if binary is None:
        return ScanResult.skipped(TOOL, "terraform not installed")
    try:
        proc = run_tool(command(binary), ctx)
    except ToolFailed as exc:
        return ScanResult.skipped(TOOL, str(exc))
    findings = parse(proc.stdout, proc.stderr)
    if proc.returncode not in (0, 3) and not findings:
        return ScanResult.skipped(TOOL, f"terraform fmt failed: {tail(proc.stderr)}")
    return ScanResult.from_findings(TOOL, findings)


def parse(stdout: str, stderr: str) -> list[Finding]:
    """Unformatted files from stdout, syntax errors from stderr's ``Error:`` blocks."""
    findings = [
        Finding(
            file=line.strip().removeprefix("./"),
            line=None,
            tool=TOOL,
            rule="terraform-fmt",
            severity="warning",
            message="not in canonical format: run `terraform fmt`",
        )
        for line in stdout.splitlines()
        if line.strip()
    ]
    for block in re.split(r"(?m)^(?=Error: )", stderr):
        if not block.startswith("Error: "):
            continue
        title = block.splitlines()[0].removeprefix("Error: ").strip()
        where = _LOCATION.search(block)
        findings.append(
            Finding(
                file=where.group("file").removeprefix("./") if where else "",
                line=int(where.group("line")) if where else None,
                tool=TOOL,
                rule="terraform-syntax",
                severity="error",
                message=title,
            )
        )
    return findings
