"""detect-secrets' own detectors over the files its CLI will not read.

The CLI drops every file whose extension it calls non-text (``.lock``, ``.sum``, ``.svg``,
``.css``...), even when asked not to once there is more than one file (its workers re-add
the filter; detect-secrets 1.5): a key pasted into ``yarn.lock`` or a logo would pass. This
pass reads those files line by line with the same plugins and keeps what a *specific*
detector recognises (AWS keys, private keys, GitHub/Slack/Stripe tokens, basic auth).
Entropy hits are left out (in these files they are digests and ids); placeholders, example
keys, references and PEM bodies are dropped as in :mod:`.secret_noise`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from backend.gates.findings import Finding
from backend.gates.scanners._base import ToolFailed
from backend.gates.scanners.secret_noise import (
    ENTROPY_TYPES,
    KEYWORD_TYPES,
    is_reference_line,
    not_a_secret,
    pem_noise_lines,
    whole_token,
)

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
            pem = pem_noise_lines(lines)
            for number, line in enumerate(lines, 1):
                if number in pem:
                    continue  # a PEM body: the key is reported at its BEGIN line
                found: dict[str, str] = {}  # value -> its most specific kind
                for hit in sorted(scan_line(line), key=lambda h: h.type in KEYWORD_TYPES):
                    value = whole_token(line, str(hit.secret_value or ""))
                    if hit.type in ENTROPY_TYPES or not_a_secret(value):
                        continue
                    if hit.type in KEYWORD_TYPES and not value and is_reference_line(line):
                        continue
                    found.setdefault(value, hit.type)
                findings.extend(
                    Finding(
                        file=rel,
                        line=number,
                        tool=TOOL,
                        rule=kind,
                        severity="error",
                        message=f"possible secret ({kind}); remove it and rotate it",
                    )
                    for kind in sorted(set(found.values()))
                )
    return findings


def _text_lines(path: Path) -> list[str]:
    try:
        if path.stat().st_size > MAX_BYTES:
            return []
        return path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []  # binary: the bytes path of the regex floor covers it
