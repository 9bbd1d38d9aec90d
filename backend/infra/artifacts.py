"""The ``infra_artifacts`` repository and the gate history shared with dev task PRs.

An infra artifact is born when the Infra agent's PR is opened, already in
``awaiting_qa`` (ADR 0014 §4), keyed by ``pr_action_id`` (the id of the proposed
``open_infra_pr`` action) with one artifact per session. Files live in git; the row keeps
their paths, the head commit, the latest findings and the gate columns.

Every gate move goes through :func:`apply_transition`: one ``UPDATE … WHERE key = …
AND gate_status = <expected> AND gate_correction_count = <expected>`` plus a
``gate_history`` row, inside the caller's transaction. A writer that read a stale state
changes zero rows and gets :class:`ConflictError`, so two operators approving at once
cannot both win, and no read-then-write race can lose an update.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from backend.events import utcnow_iso
from backend.exceptions import ConflictError, NotFoundError
from backend.gates.state import GateStatus, GateSubjectState
from backend.store.db import Database, Row, Tx, dumps, loads

Finding = dict[str, Any]


@dataclass(frozen=True)
class HistoryEntry:
    """One step of a PR's gate timeline."""

    ts: str
    from_status: str | None
    to_status: str
    actor: str
    note: str | None

    @classmethod
    def from_row(cls, row: Row) -> HistoryEntry:
        """Build from a ``gate_history`` row."""
        return cls(str(row["ts"]), row["from_status"], row["to_status"], row["actor"], row["note"])

    def to_dict(self) -> dict[str, Any]:
        """The timeline item of the HTTP API: ``{ts, from, to, actor, note}``."""
        return {
            "ts": self.ts,
            "from": self.from_status,
            "to": self.to_status,
            "actor": self.actor,
            "note": self.note,
        }


@dataclass(frozen=True)
class InfraArtifact:
    """One infra PR and where it stands in the gates."""

    pr_action_id: str
    project_id: str
    session_id: str
    title: str
    branch: str
    pr_id: str
    pr_url: str
    head: str
    files: tuple[str, ...]
    findings: tuple[Finding, ...]
    gate_status: GateStatus
    gate_correction_count: int
    blocked: bool
    blocked_reason: str | None
    created_at: str
    updated_at: str

    @classmethod
    def from_row(cls, row: Row) -> InfraArtifact:
        """Build from an ``infra_artifacts`` row (SQLite gives 0/1 for booleans)."""
        return cls(
            pr_action_id=row["pr_action_id"],
            project_id=row["project_id"],
            session_id=row["session_id"],
            title=row["title"],
            branch=row["branch"],
            pr_id=row["pr_id"],
            pr_url=row["pr_url"],
            head=row["head"],
            files=tuple(loads(row["files"]) or ()),
            findings=tuple(loads(row["findings"]) or ()),
            gate_status=cast(GateStatus, row["gate_status"]),
            gate_correction_count=int(row["gate_correction_count"]),
            blocked=bool(row["blocked"]),
            blocked_reason=row["blocked_reason"],
            created_at=str(row["created_at"]),
            updated_at=str(row["updated_at"]),
        )

    @property
    def state(self) -> GateSubjectState:
        """The gate columns as the state machine sees them."""
        return GateSubjectState(self.gate_status, self.gate_correction_count, self.blocked_reason)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``GET /api/infra-artifacts/{id}``, approvals list)."""
        return {
            "pr_action_id": self.pr_action_id,
            "project_id": self.project_id,
            "session_id": self.session_id,
            "title": self.title,
            "branch": self.branch,
            "pr_id": self.pr_id,
            "pr_url": self.pr_url,
            "head": self.head,
            "files": list(self.files),
            "findings": [dict(f) for f in self.findings],
            "findings_count": len(self.findings),
            "gate_status": self.gate_status,
            "gate_correction_count": self.gate_correction_count,
            "blocked": self.blocked,
            "blocked_reason": self.blocked_reason,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


def add_history(
    tx: Tx,
    subject: str,
    from_status: str | None,
    to_status: str,
    actor: str,
    note: str | None = None,
) -> None:
    """Append one row to ``subject``'s gate timeline."""
    tx.execute(
        "gate_history_insert",
        {
            "subject": subject,
            "from_status": from_status,
            "to_status": to_status,
            "actor": actor,
            "note": note,
            "now": utcnow_iso(),
        },
    )


def read_history(db: Database, subject: str) -> list[HistoryEntry]:
    """``subject``'s gate timeline, oldest first."""
    with db.transaction(write=False) as tx:
        return [HistoryEntry.from_row(r) for r in tx.all("gate_history_of", {"subject": subject})]


def apply_transition(
    tx: Tx,
    query: str,
    key: str,
    *,
    previous: GateSubjectState,
    state: GateSubjectState,
    findings: Sequence[Finding],
    head: str | None,
    files: Sequence[str],
    actor: str,
    note: str | None,
) -> None:
    """Move a gated subject from ``previous`` to ``state`` if nobody moved it first.

    Args:
        tx: the caller's transaction (events go in the same one).
        query: the table's conditional update (``infra_artifact_transition``...).
        key: the subject's key; it is also the ``gate_history`` subject.
        previous: the state the caller computed the transition from.
        state: the state to store.
        findings, head, files: the values to store with it.
        actor: who moved it (an operator, ``qa``, ``secops``, the author agent).
        note: free text for the timeline.

    Raises:
        ConflictError: the stored state is no longer ``previous`` (a concurrent writer won).
    """
    changed = tx.execute(
        query,
        {
            "key": key,
            "from_status": previous.status,
            "from_count": previous.correction_count,
            "to_status": state.status,
            "to_count": state.correction_count,
            "blocked": state.blocked,
            "blocked_reason": state.blocked_reason,
            "findings": dumps(list(findings)),
            "head": head,
            "files": dumps(list(files)),
            "now": utcnow_iso(),
        },
    )
    if changed != 1:
        raise ConflictError(
            f"{key} is no longer {previous.status} (correction {previous.correction_count}); "
            "another action changed it first",
            key=key,
            expected=previous.status,
        )
    add_history(tx, key, previous.status, state.status, actor, note)


class InfraArtifacts:
    """Reads and writes of ``infra_artifacts``; writes happen in the caller's transaction."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def insert(self, tx: Tx, artifact: InfraArtifact, *, actor: str) -> None:
        """Insert a freshly opened PR's artifact and the first timeline row."""
        tx.execute(
            "infra_artifact_insert",
            {
                "pr_action_id": artifact.pr_action_id,
                "project_id": artifact.project_id,
                "session_id": artifact.session_id,
                "title": artifact.title,
                "branch": artifact.branch,
                "pr_id": artifact.pr_id,
                "pr_url": artifact.pr_url,
                "head": artifact.head,
                "files": dumps(list(artifact.files)),
                "findings": dumps([]),
                "gate_status": artifact.gate_status,
                "blocked": False,
                "now": artifact.created_at,
            },
        )
        add_history(
            tx,
            artifact.pr_action_id,
            None,
            artifact.gate_status,
            actor,
            f"PR opened on {artifact.branch} ({artifact.head[:10]})",
        )

    def get(self, pr_action_id: str) -> InfraArtifact:
        """The artifact of ``pr_action_id``.

        Raises:
            NotFoundError: no such artifact.
        """
        with self.db.transaction(write=False) as tx:
            row = tx.one("infra_artifact_get", {"pr_action_id": pr_action_id})
        if row is None:
            raise NotFoundError(
                f"no infra artifact with pr_action_id {pr_action_id!r}", pr_action_id=pr_action_id
            )
        return InfraArtifact.from_row(row)

    def find_by_session(self, session_id: str) -> InfraArtifact | None:
        """The session's artifact (one infra PR cycle per session), if any."""
        with self.db.transaction(write=False) as tx:
            row = tx.one("infra_artifact_by_session", {"session_id": session_id})
        return InfraArtifact.from_row(row) if row is not None else None

    def list_in_review(self, project_id: str | None = None) -> list[InfraArtifact]:
        """Every artifact not merged or closed (of one project, or all), oldest first."""
        with self.db.transaction(write=False) as tx:
            rows = tx.all("infra_artifacts_in_review", {"project_id": project_id})
        return [InfraArtifact.from_row(r) for r in rows]

    def transition(
        self,
        tx: Tx,
        artifact: InfraArtifact,
        state: GateSubjectState,
        *,
        actor: str,
        note: str | None = None,
        findings: Sequence[Finding] | None = None,
        head: str | None = None,
        files: Sequence[str] | None = None,
    ) -> None:
        """Store ``state`` (and optionally new findings/head/files) if ``artifact`` is current.

        Raises:
            ConflictError: the stored row moved since ``artifact`` was read.
        """
        apply_transition(
            tx,
            "infra_artifact_transition",
            artifact.pr_action_id,
            previous=artifact.state,
            state=state,
            findings=artifact.findings if findings is None else findings,
            head=head or artifact.head,
            files=artifact.files if files is None else files,
            actor=actor,
            note=note,
        )

    def history(self, pr_action_id: str) -> list[HistoryEntry]:
        """The artifact's gate timeline, oldest first."""
        return read_history(self.db, pr_action_id)
