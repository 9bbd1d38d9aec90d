"""semgrep with the rules shipped in ``backend/gates/rules/semgrep`` — one run per gate.

Offline and unsilenceable: ``--metrics=off --disable-version-check`` (plus the env
vars), ``--disable-nosem``, a local ``--config`` directory. The copy is scanned as one
directory (``.``), never as a list of files on the command line: 60,000 paths do not fit
in ``ARG_MAX`` ("Argument list too long"). The copy holds exactly the files to scan, and
what a directory walk would skip is switched off: ``--x-ignore-semgrepignore-files`` (no
default ``.semgrepignore``, so ``tests/``, ``node_modules/``, ``vendor/`` are scanned; the
workspace already deleted the PR's own ignore files), ``--no-exclude-binary-files``; the
copy is no git checkout, so ``.gitignore`` is not honoured either (a test checks all
three). The ``--x-`` flag is not semgrep's stable API, which is one more reason semgrep is
pinned in ``pyproject.toml``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from backend.gates.findings import Finding, ScanResult, Severity
from backend.gates.scanners._base import RULES_DIR, ScanContext, ToolFailed, run_tool, tail

TOOL = "semgrep"
SEMGREP_RULES = RULES_DIR / "semgrep"
_SEVERITY: dict[str, Severity] = {"ERROR": "error", "WARNING": "warning", "INFO": "info"}


def command(binary: str, targets: Sequence[str] = (".",)) -> list[str]:
    """The exact command line (the benchmark runs it directly too); the gate scans ``.``."""
    return [
        binary,
        "scan",
        "--metrics=off",
        "--disable-version-check",
        "--disable-nosem",
        "--json",
        "--quiet",
        "--x-ignore-semgrepignore-files",
        "--no-exclude-binary-files",
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
        proc = run_tool(command(ctx.semgrep_bin), ctx)
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
