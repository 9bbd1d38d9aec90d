"""detect-secrets' own detectors over the files its CLI will not read.

The CLI drops every file whose extension it calls non-text (``.lock``, ``.sum``, ``.svg``,
``.css``, ``.map``...), and with more than one file it drops them even when asked not
to: its worker processes re-add that filter (``Settings.DEFAULT_FILTERS``; seen with
detect-secrets 1.5). A key pasted into ``yarn.lock``, ``go.sum`` or a logo would pass.
This pass reads those files here, line by line, with the same plugins, and keeps what a
*specific* detector recognises (AWS keys, private keys, GitHub/Slack/Stripe tokens, basic
auth...). Entropy hits are left out on purpose: in these files they are digests and ids
(:mod:`~backend.gates.scanners.secret_noise`), and a keyword hit must not be a reference.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from backend.gates.findings import Finding
from backend.gates.scanners._base import ToolFailed
from backend.gates.scanners.secret_noise import ENTROPY_TYPES, KEYWORD_TYPES, is_reference_line

TOOL = "detect-secrets"
MAX_BYTES = 8 * 1024 * 1024
"""Larger files are scanned only by the other scanners (the regex floor reads them)."""


def skipped_by_cli(files: Iterable[str]) -> list[str]:
    """The files detect-secrets' CLI does not read, by its own extension list."""
    try:
        from detect_secrets.filters.heuristic import IGNORED_FILE_EXTENSIONS
    except ImportError as exc:  # the package is a dependency; its absence is a failure
        raise ToolFailed(f"detect-secrets library not importable: {exc}") from exc
    return [f for f in files if PurePosixPath(f).suffix.lower() in IGNORED_FILE_EXTENSIONS]


def scan_skipped(root: Path, files: Iterable[str]) -> list[Finding]:
    """Findings of detect-secrets' specific detectors in the files its CLI skips.

    Raises:
        ToolFailed: the detect-secrets library cannot be imported.
    """
    targets = skipped_by_cli(files)
    if not targets:
        return []
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    findings: list[Finding] = []
    with default_settings():
        for rel in targets:
            lines = _text_lines(root / rel)
            for number, line in enumerate(lines, 1):
                kinds = {s.type for s in scan_line(line)} - ENTROPY_TYPES
                if kinds & KEYWORD_TYPES and is_reference_line(line):
                    kinds -= KEYWORD_TYPES
                findings.extend(
                    Finding(
                        file=rel,
                        line=number,
                        tool=TOOL,
                        rule=kind,
                        severity="error",
                        message=f"possible secret ({kind}); remove it and rotate it",
                    )
                    for kind in sorted(kinds)
                )
    return findings


def _text_lines(path: Path) -> list[str]:
    try:
        if path.stat().st_size > MAX_BYTES:
            return []
        return path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []  # binary: the bytes path of the regex floor covers it
