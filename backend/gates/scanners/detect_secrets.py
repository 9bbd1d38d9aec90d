"""detect-secrets over the whole copy, with the allowlist filter disabled.

``--disable-filter detect_secrets.filters.allowlist.is_line_allowlisted`` makes the
tool report lines marked ``# pragma: allowlist secret`` (verified against
detect-secrets 1.5); ``-n`` keeps it offline.
"""

from __future__ import annotations

import json
from pathlib import Path

from backend.gates.findings import Finding, ScanResult
from backend.gates.scanners._base import ScanContext, ToolFailed, find_binary, run_tool, tail
from backend.gates.scanners.secret_noise import DETECT_SECRETS_FLAGS, is_noise
from backend.gates.scanners.skipped_secrets import scan_skipped

TOOL = "detect-secrets"
ALLOWLIST_FILTER = "detect_secrets.filters.allowlist.is_line_allowlisted"


def command(binary: str) -> list[str]:
    """The exact command line (the benchmark runs it directly too)."""
    return [
        binary,
        "scan",
        "-n",
        "--all-files",
        "--disable-filter",
        ALLOWLIST_FILTER,
        *DETECT_SECRETS_FLAGS,
        "--",
        ".",
    ]


def scan(ctx: ScanContext) -> ScanResult | None:
    """Scan every file of the copy; ``None`` when the copy is empty."""
    if not ctx.files:
        return None
    binary = find_binary(TOOL)
    if binary is None:
        return ScanResult.skipped(TOOL, "detect-secrets not installed")
    try:
        proc = run_tool(command(binary), ctx)
        found = parse(proc.stdout, proc.stderr, ctx.root)
        seen = {(f.file, f.line, f.rule) for f in found}
        extra = [
            f for f in scan_skipped(ctx.root, ctx.files) if (f.file, f.line, f.rule) not in seen
        ]
        return ScanResult.from_findings(TOOL, found + extra)
    except ToolFailed as exc:
        return ScanResult.skipped(TOOL, str(exc))


def parse(stdout: str, stderr: str = "", root: Path | None = None) -> list[Finding]:
    """The baseline JSON's ``results`` to findings, without the digests and references
    :mod:`~backend.gates.scanners.secret_noise` recognises (read from the files under
    ``root``; without ``root`` nothing is dropped).

    Raises:
        ToolFailed: no baseline JSON, or the allowlist filter was not actually disabled.
    """
    try:
        data = json.loads(stdout)
        results = data["results"]
        filters = {f.get("path") for f in data.get("filters_used", [])}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ToolFailed(f"detect-secrets gave no baseline JSON: {tail(stderr or stdout)}") from exc
    if ALLOWLIST_FILTER in filters:
        raise ToolFailed("detect-secrets still honours allowlist pragmas; refusing its result")
    findings = []
    for file, items in results.items():
        lines = _lines(root, str(file)) if root is not None else None
        for item in items:
            number = item.get("line_number")
            if lines is not None and isinstance(number, int) and 1 <= number <= len(lines):
                kind = str(item.get("type", ""))
                rel = str(file).removeprefix("./")
                if is_noise(kind, rel, lines[number - 1], item.get("hashed_secret")):
                    continue
            findings.append(
                Finding(
                    file=str(file).removeprefix("./"),
                    line=item.get("line_number"),
                    tool=TOOL,
                    rule=str(item.get("type", "secret")),
                    severity="error",
                    message=(
                        f"possible secret ({item.get('type', 'secret')}); remove it and rotate it"
                    ),
                )
            )
    return findings


def _lines(root: Path, file: str) -> list[str] | None:
    try:
        return (root / file).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
