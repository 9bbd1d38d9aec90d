"""parliament on IAM policy documents (JSON files with a top-level ``Statement``).

parliament runs through its Python API in a child interpreter, not its console script,
which logs every policy to a world-readable file (:func:`command` says why). Every finding
parliament reports at its default minimum severity (LOW) fails the gate —
``RESOURCE_STAR`` on scoped actions is exactly the least-privilege mistake the Lab 87 seed
shipped — and ``UNKNOWN_*`` (a misspelt action can hide a grant) is an error, unless the
audit shows it is no least-privilege problem (a confined ``Resource "*"``: ``info``).
"""

from __future__ import annotations

import importlib.util
import json
import sys

from backend.gates.findings import Finding, ScanResult, Severity
from backend.gates.scanners._base import ScanContext, ToolFailed, run_tool, tail
from backend.gates.targets import is_iam_policy

TOOL = "parliament"
_SEVERITY: dict[str, Severity] = {
    "CRITICAL": "error",
    "HIGH": "error",
    "MEDIUM": "warning",
    "LOW": "warning",
    "INFO": "info",
}


_WORKER = """\
import json, sys
from pathlib import Path
from backend.posture.iam_parliament import analyze
for path in sys.argv[2:]:  # argv[1] is the "--" that ends the options
    text = Path(path).read_text(encoding="utf-8")
    try:
        document = json.loads(text)
    except ValueError:
        document = None
    for hit in analyze(text, path, document if isinstance(document, dict) else None):
        if hit.severity in ("MUTE", "INFO"):  # the CLI's default minimum severity: LOW
            continue
        print(json.dumps({"issue": hit.issue, "title": hit.title, "severity": hit.severity,
                          "detail": hit.detail, "location": hit.location, "quiet": hit.quiet},
                         default=str))
"""


def available() -> bool:
    """parliament is importable by this interpreter."""
    return importlib.util.find_spec("parliament") is not None


def command(binary: str, targets: list[str]) -> list[str]:
    """The exact command line (the benchmark runs it directly too); ``binary`` is a Python.

    Python ends its own options at ``-c`` and passes a ``--`` on to the worker, which skips
    it; the PR's file names also go in as ``./path``: data, whatever they are called.
    ``-P``: the worker runs in the PR's copy, whose ``json.py`` must not be imported.

    Not the console script: the 1.6.4 CLI on PyPI appends its argv and every policy's contents
    to ``/tmp/parliament.log`` (world-readable). The worker reproduces the CLI's ``--json
    --include-community-auditors`` behaviour (community config override, ``enhance_finding``,
    default minimum severity LOW) and keeps a subprocess timeout.
    """
    return [binary, "-P", "-c", _WORKER, "--", *(f"./{target}" for target in targets)]


def scan(ctx: ScanContext) -> ScanResult | None:
    """Audit every IAM policy JSON of the copy; ``None`` when there is none."""
    targets = [f for f in ctx.files if is_iam_policy(ctx.root, f)]
    if not targets:
        return None
    if not available():
        return ScanResult.skipped(TOOL, "parliament not installed")
    try:
        proc = run_tool(command(sys.executable, targets), ctx)
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
        message = _message(item, location)
        if item.get("quiet"):
            severity = "info"
            message += f" (not over-broad: {item['quiet']})"
        findings.append(
            Finding(
                file=str(location.get("filepath", "")).removeprefix("./"),
                line=location.get("line") if isinstance(location.get("line"), int) else None,
                tool=TOOL,
                rule=issue,
                severity=severity,
                message=message,
            )
        )
    if "Traceback" in stderr:
        raise ToolFailed(f"parliament crashed: {tail(stderr)}")
    return findings


def _message(item: dict[str, object], location: dict[str, object]) -> str:
    """Title plus whatever says *which* grant: detail, escalation type, first actions."""
    parts = [str(item.get("title") or item.get("issue"))]
    for value in (item.get("detail"), location.get("type"), location.get("actions")):
        if isinstance(value, list):
            value = ", ".join(map(str, value[:5])) + (" ..." if len(value) > 5 else "")
        if value:
            parts.append(str(value))
    return ": ".join(parts)
