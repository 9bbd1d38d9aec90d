"""semgrep with the rules shipped in ``backend/gates/rules/semgrep`` — one run per gate.

Offline and unsilenceable: ``--metrics=off --disable-version-check`` (plus the env
vars), ``--disable-nosem``, a local ``--config`` directory, and every file of the copy
passed as an explicit target (explicit targets bypass ``.semgrepignore`` and let the
generic Dockerfile rules see ``Dockerfile.*`` names semgrep would not classify).
"""

from __future__ import annotations

import json

from backend.gates.findings import Finding, ScanResult, Severity
from backend.gates.scanners._base import RULES_DIR, ScanContext, ToolFailed, run_tool, tail

TOOL = "semgrep"
SEMGREP_RULES = RULES_DIR / "semgrep"
_SEVERITY: dict[str, Severity] = {"ERROR": "error", "WARNING": "warning", "INFO": "info"}


def command(binary: str, targets: list[str]) -> list[str]:
    """The exact command line (the benchmark runs it directly too)."""
    return [
        binary,
        "scan",
        "--metrics=off",
        "--disable-version-check",
        "--disable-nosem",
        "--json",
        "--quiet",
        "--config",
        str(SEMGREP_RULES),
        "--",
        *targets,
    ]


def scan(ctx: ScanContext) -> ScanResult | None:
    """Run the shipped rules on every file of the copy; ``None`` when the copy is empty."""
    if not ctx.files:
        return None
    if not ctx.semgrep_bin:
        return ScanResult.skipped(TOOL, ctx.semgrep_missing)
    try:
        proc = run_tool(command(ctx.semgrep_bin, list(ctx.files)), ctx)
        return ScanResult.from_findings(TOOL, parse(proc.stdout, proc.stderr))
    except ToolFailed as exc:
        return ScanResult.skipped(TOOL, str(exc))


def parse(stdout: str, stderr: str = "") -> list[Finding]:
    """semgrep's ``--json`` results to findings.

    A target semgrep could not parse becomes a warning finding (the PR's file cannot
    be vouched for); any other semgrep error means the run cannot be trusted.

    Raises:
        ToolFailed: no JSON, or an error that is not about one target file.
    """
    try:
        data = json.loads(stdout)
        results = data["results"]
        errors = data.get("errors", [])
    except (ValueError, KeyError, TypeError) as exc:
        raise ToolFailed(f"semgrep gave no JSON: {tail(stderr or stdout)}") from exc
    findings = [
        Finding(
            file=str(r["path"]).removeprefix("./"),
            line=r.get("start", {}).get("line"),
            tool=TOOL,
            rule=str(r["check_id"]).rsplit(".", 1)[-1],
            severity=_SEVERITY.get(str(r.get("extra", {}).get("severity", "")).upper(), "warning"),
            message=" ".join(str(r.get("extra", {}).get("message", "")).split()),
        )
        for r in results
    ]
    for error in errors:
        path = error.get("path")
        if path:
            findings.append(
                Finding(
                    file=str(path).removeprefix("./"),
                    line=_error_line(error),
                    tool=TOOL,
                    rule="semgrep-parse-error",
                    severity="warning",
                    message=f"semgrep could not analyse this file: {error.get('type', 'error')}",
                )
            )
        elif str(error.get("level", "")).lower() == "error":
            raise ToolFailed(f"semgrep error: {error.get('message', error)}")
    return findings


def _error_line(error: dict[str, object]) -> int | None:
    spans = error.get("spans")
    if isinstance(spans, list) and spans and isinstance(spans[0], dict):
        start = spans[0].get("start")
        if isinstance(start, dict) and isinstance(start.get("line"), int):
            return int(start["line"])
    return None
