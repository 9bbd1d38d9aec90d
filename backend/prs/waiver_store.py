"""The ``gate_waivers`` table: an operator's waivers of gate findings, per PR.

What the gate flow needs to apply them (:func:`annotate`, :meth:`GateWaivers.of_pr`) lives
here, apart from the waiver action in :mod:`backend.prs.waivers`, which drives the
pipeline.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from backend.gates.findings import BLOCKING
from backend.prs.records import Finding
from backend.store.db import Database, Row, Tx


@dataclass(frozen=True)
class Waiver:
    """One waived finding of one PR.

    Attributes:
        finding: the finding's id (fingerprint).
        gate, tool, rule, file, line: what was waived, as the gate reported it.
    """

    pr_id: str
    finding: str
    gate: str
    tool: str
    rule: str
    file: str
    line: int | None
    operator: str
    reason: str
    created_at: str

    @classmethod
    def from_row(cls, row: Row) -> Waiver:
        """Build from a ``gate_waivers`` row."""
        line = row["line"]
        return cls(
            pr_id=row["pr_id"],
            finding=row["finding"],
            gate=row["gate"],
            tool=row["tool"],
            rule=row["rule"],
            file=row["file"],
            line=None if line is None else int(line),
            operator=row["operator"],
            reason=row["reason"],
            created_at=str(row["created_at"]),
        )

    @property
    def note(self) -> str:
        """What the timeline and the finding show."""
        return f"waived by {self.operator}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        """The ``waived`` object stored on the finding and sent over the API."""
        return {
            "operator": self.operator,
            "reason": self.reason,
            "created_at": self.created_at,
            "note": self.note,
        }


class GateWaivers:
    """Reads and writes of ``gate_waivers``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def of_pr(self, pr_id: str) -> dict[str, Waiver]:
        """The PR's waivers by finding id."""
        with self.db.transaction(write=False) as tx:
            rows = tx.all("waivers_of_pr", {"pr_id": pr_id})
        return {w.finding: w for w in map(Waiver.from_row, rows)}

    def insert(self, tx: Tx, waiver: Waiver) -> bool:
        """Store ``waiver``; ``False`` when that finding was already waived on that PR."""
        changed = tx.execute(
            "waiver_insert",
            {
                "pr_id": waiver.pr_id,
                "finding": waiver.finding,
                "gate": waiver.gate,
                "tool": waiver.tool,
                "rule": waiver.rule,
                "file": waiver.file,
                "line": waiver.line,
                "operator": waiver.operator,
                "reason": waiver.reason,
                "now": waiver.created_at,
            },
        )
        return changed == 1


def annotate(findings: Sequence[Finding], waivers: Mapping[str, Waiver]) -> list[Finding]:
    """``findings`` with ``waived`` set on those an operator waived (as stored and shown)."""
    out = []
    for finding in findings:
        waiver = waivers.get(str(finding.get("id") or ""))
        out.append({**finding, "waived": waiver.to_dict()} if waiver else dict(finding))
    return out


def still_blocking(findings: Sequence[Finding]) -> list[Finding]:
    """The stored findings that block: not waived, and of a blocking severity (an
    operator's rejection and a skipped scanner included: they cannot be waived)."""
    return [f for f in findings if f.get("severity") in BLOCKING and not f.get("waived")]
