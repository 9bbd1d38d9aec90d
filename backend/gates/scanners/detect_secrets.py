"""detect-secrets over the whole copy, with the allowlist filter disabled.

``--disable-filter detect_secrets.filters.allowlist.is_line_allowlisted`` makes the
tool report lines marked ``# pragma: allowlist secret`` (verified against
detect-secrets 1.5); ``-n`` keeps it offline. Each secret is reported once, on the line
where it starts (:func:`parse`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from backend.gates.findings import Finding, ScanResult
from backend.gates.scanners._base import ScanContext, ToolFailed, find_binary, run_tool, tail
from backend.gates.scanners.secret_noise import (
    DETECT_SECRETS_FLAGS,
    ENTROPY_TYPES,
    KEYWORD_TYPES,
    flagged_value,
    is_key_fingerprint,
    is_noise,
    pem_noise_lines,
    private_key_start,
)
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
    """The baseline JSON's ``results`` to findings, one per secret, on the line it starts.

    With ``root`` (the files are read from there; without it nothing is dropped or moved):
    what :mod:`~backend.gates.scanners.secret_noise` calls noise is dropped (digests,
    references, placeholders, example keys, the body of a PEM block and any certificate);
    a private key is moved to its BEGIN line (detect-secrets reports a YAML block scalar's
    key line); and a value flagged by several detectors is kept once, under the most
    specific (``GitHub Token`` over ``Base64 High Entropy String`` over ``Secret Keyword``),
    like anything else flagged on a private key's BEGIN line.

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
    findings: list[Finding] = []
    for file, items in results.items():
        rel = str(file).removeprefix("./")
        lines = _lines(root, str(file)) if root is not None else None
        kept = _kept(items, lines, rel) if lines is not None else list(items)
        findings.extend(
            Finding(
                file=rel,
                line=item.get("line_number"),
                tool=TOOL,
                rule=str(item.get("type", "secret")),
                severity="error",
                message=f"possible secret ({item.get('type', 'secret')}); remove it and rotate it",
            )
            for item in kept
        )
    return findings


def _fingerprint(lines: list[str], number: int, hashed: str | None) -> bool:
    token, _ = flagged_value(lines[number - 1], hashed)
    return token is not None and is_key_fingerprint(token, lines, number)


def _rank(kind: str) -> int:
    """Lower is more specific: a named detector, then entropy, then the keyword detector."""
    return 2 if kind in KEYWORD_TYPES else 1 if kind in ENTROPY_TYPES else 0


def _kept(items: list[dict[str, Any]], lines: list[str], rel: str) -> list[dict[str, Any]]:
    """``items`` of one file without noise, keys on their BEGIN line, one per secret."""
    pem = pem_noise_lines(lines)
    out: dict[tuple[int, str], dict[str, Any]] = {}
    unjudged: list[dict[str, Any]] = []  # no line to judge them by: kept
    key_lines: set[int] = set()
    for item in sorted(items, key=lambda i: _rank(str(i.get("type", "")))):
        number, kind = item.get("line_number"), str(item.get("type", ""))
        if not isinstance(number, int) or not 1 <= number <= len(lines):
            unjudged.append(item)
            continue
        if kind == "Private Key":
            number = private_key_start(lines, number) or number
            item = {**item, "line_number": number}
            key_lines.add(number)
        if kind != "Private Key" and (number in pem or number in key_lines):
            continue  # a PEM body, a certificate, or the key's own line: reported once
        if is_noise(kind, rel, lines[number - 1], item.get("hashed_secret")):
            continue
        if kind in ENTROPY_TYPES and _fingerprint(lines, number, item.get("hashed_secret")):
            continue
        out.setdefault((number, str(item.get("hashed_secret") or kind)), item)
    return unjudged + sorted(out.values(), key=lambda i: (i["line_number"], _rank(i["type"])))


def _lines(root: Path, file: str) -> list[str] | None:
    try:
        return (root / file).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
