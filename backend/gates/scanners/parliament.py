"""parliament on IAM policy documents (JSON files with a top-level ``Statement``).

Every finding parliament reports at its default minimum severity (LOW) fails the
gate — ``RESOURCE_STAR`` on scoped actions is exactly the least-privilege mistake the
Lab 87 seed shipped — and ``UNKNOWN_*`` (a misspelt action can hide a grant) is an error.
"""

from __future__ import annotations

import json

from backend.gates.findings import Finding, ScanResult, Severity
from backend.gates.scanners._base import ScanContext, ToolFailed, find_binary, run_tool, tail
from backend.gates.targets import is_iam_policy

TOOL = "parliament"
_SEVERITY: dict[str, Severity] = {
    "CRITICAL": "error",
    "HIGH": "error",
    "MEDIUM": "warning",
    "LOW": "warning",
    "INFO": "info",
}


def command(binary: str, targets: list[str]) -> list[str]:
    """The exact command line (the benchmark runs it directly too)."""
    return [binary, "--include-community-auditors", "--json", "--files", ",".join(targets)]


def scan(ctx: ScanContext) -> ScanResult | None:
    """Audit every IAM policy JSON of the copy; ``None`` when there is none."""
    targets = [f for f in ctx.files if is_iam_policy(ctx.root, f)]
    if not targets:
        return None
    binary = find_binary(TOOL)
    if binary is None:
        return ScanResult.skipped(TOOL, "parliament not installed")
    odd = [t for t in targets if "," in t]
    if odd:  # --files is comma-separated; such a name cannot be passed faithfully
        return ScanResult.skipped(TOOL, f"policy file names with a comma: {odd}")
    try:
        proc = run_tool(command(binary, targets), ctx)
        return ScanResult.from_findings(TOOL, parse(proc.stdout, proc.stderr))
    except ToolFailed as exc:
        return ScanResult.skipped(TOOL, str(exc))


def parse(stdout: str, stderr: str = "") -> list[Finding]:
    """parliament's JSON lines to findings.

    Raises:
        ToolFailed: a line that is not a JSON finding, or a crash with no output.
    """
    findings = []
    for raw in stdout.splitlines():
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
            issue = str(item["issue"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ToolFailed(f"parliament gave unexpected output: {tail(raw)}") from exc
        location = item.get("location") or {}
        severity = _SEVERITY.get(str(item.get("severity", "")).upper(), "warning")
        if issue.startswith("UNKNOWN_"):
            severity = "error"
        detail = item.get("detail")
        if isinstance(detail, list):
            detail = ", ".join(map(str, detail[:5])) + (" ..." if len(detail) > 5 else "")
        findings.append(
            Finding(
                file=str(location.get("filepath", "")).removeprefix("./"),
                line=location.get("line") if isinstance(location.get("line"), int) else None,
                tool=TOOL,
                rule=issue,
                severity=severity,
                message=f"{item.get('title', issue)}: {detail}"
                if detail
                else str(item.get("title", issue)),
            )
        )
    if not findings and "Traceback" in stderr:
        raise ToolFailed(f"parliament crashed: {tail(stderr)}")
    return findings
