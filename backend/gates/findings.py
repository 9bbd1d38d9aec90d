"""What a scanner reports: findings and a per-scanner outcome."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
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
        return {k: data[k] for k in ("tool", "rule", "file", "line", "severity", "message")}


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
