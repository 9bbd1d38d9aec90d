"""What a scanner reports: findings and a per-scanner outcome.

Every finding of a gate run gets a stable id, its fingerprint (:func:`fingerprint`): the
tool, the rule, the file and the whitespace-normalised text of the flagged line. An
operator's waiver names that id, so it survives a correction that moves the line or edits
other lines, and stops applying as soon as the flagged line itself changes.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Literal

Severity = Literal["error", "warning", "info"]
"""Normalised severity. ``error`` and ``warning`` fail a gate; ``info`` is advice."""
ScanStatus = Literal["pass", "fail", "skipped"]
BLOCKING: frozenset[str] = frozenset({"error", "warning"})


@dataclass(frozen=True)
class Finding:
    """One problem a scanner found.

    Attributes:
        file: path relative to the scanned root, ``/``-separated.
        line: 1-based line, ``None`` when the tool gives none.
        tool: the scanner (``hadolint``, ``semgrep``...).
        rule: the tool's rule id (``DL3007``, ``gha-pull-request-target``...).
        severity: normalised severity.
        message: what is wrong, for a human and for the author agent.
    """

    file: str
    line: int | None
    tool: str
    rule: str
    severity: Severity
    message: str
    fingerprint: str | None = field(default=None, compare=False)
    """The stable id (:func:`fingerprint`), set once the run knows the line's text."""

    def sort_key(self) -> tuple[str, int, str, str, str]:
        """Report order: by file, then line (whole-file findings first), tool, rule."""
        return (self.file, self.line or 0, self.tool, self.rule, self.message)

    @property
    def blocking(self) -> bool:
        """True when this finding fails its gate."""
        return self.severity in BLOCKING

    def to_json(self) -> dict[str, object]:
        """The finding object of ``cadencia gate --json``."""
        data = asdict(self)
        out = {k: data[k] for k in ("tool", "rule", "file", "line", "severity", "message")}
        if self.fingerprint is not None:
            out["id"] = self.fingerprint
        return out


@dataclass(frozen=True)
class ScanResult:
    """The outcome of one scanner on one temporary copy.

    Attributes:
        tool: the scanner name.
        status: ``pass``/``fail`` decided from parsed output; ``skipped`` when the
            scanner could not run (missing binary, timeout, unreadable output).
        findings: everything it reported, blocking or not.
        detail: why it was skipped, or a note (e.g. how many files it saw).
    """

    tool: str
    status: ScanStatus
    findings: tuple[Finding, ...] = field(default_factory=tuple)
    detail: str | None = None

    @classmethod
    def from_findings(
        cls, tool: str, findings: list[Finding], detail: str | None = None
    ) -> ScanResult:
        """``fail`` if any finding is blocking, else ``pass``."""
        ordered = tuple(sorted(findings, key=Finding.sort_key))
        status: ScanStatus = "fail" if any(f.blocking for f in ordered) else "pass"
        return cls(tool=tool, status=status, findings=ordered, detail=detail)

    @classmethod
    def skipped(cls, tool: str, why: str) -> ScanResult:
        """The scanner could not run; never counted as a pass."""
        return cls(tool=tool, status="skipped", detail=why)


def fingerprint(tool: str, rule: str, file: str, line_text: str | None) -> str:
    """The stable id of a finding: ``f_`` and 16 hex digits.

    The line number is left out on purpose (a line moved by an unrelated edit is the same
    finding); whitespace is normalised so re-indenting does not change it either.
    """
    text = " ".join((line_text or "").split())
    digest = hashlib.sha256("\0".join((tool, rule, file, text)).encode("utf-8")).hexdigest()
    return f"f_{digest[:16]}"


def with_fingerprints(result: ScanResult, root: Path) -> ScanResult:
    """``result`` with every finding's :attr:`Finding.fingerprint` set from the files under
    ``root`` (the scanned copy); a file that cannot be read fingerprints as an empty line."""
    if not result.findings:
        return result
    texts: dict[str, list[str]] = {}
    stamped = []
    for finding in result.findings:
        if finding.file not in texts:
            texts[finding.file] = _read_lines(root, finding.file)
        lines = texts[finding.file]
        line = finding.line
        text = lines[line - 1] if line is not None and 1 <= line <= len(lines) else None
        stamped.append(
            replace(
                finding, fingerprint=fingerprint(finding.tool, finding.rule, finding.file, text)
            )
        )
    return replace(result, findings=tuple(stamped))


def _read_lines(root: Path, file: str) -> list[str]:
    if not file:
        return []
    try:
        return (root / file).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
