"""The pull request record and its repository: one table for every kind of PR.

A PR is born when its author's proposal is committed, already in ``awaiting_qa`` (ADR 0014
§4), keyed by the id of the proposed action (``pr_action_id``). ``kind`` says whose flow
it is: ``infra`` (one per session), ``dev`` (one per dev task) or ``adr``. Files live in
git; the row keeps their paths, the head commit, the latest findings and the gate columns.
Every gate move is one compare-and-set (:meth:`PullRequests.transition`), so no
read-then-write race can lose an update.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, cast

from backend.events import utcnow_iso
from backend.exceptions import ConflictError, NotFoundError
from backend.gates.state import GateStatus, GateSubjectState
from backend.store.db import Database, Row, Tx, dumps, loads

PrKind = Literal["infra", "dev", "adr"]
PR_KINDS: tuple[PrKind, ...] = ("infra", "dev", "adr")
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
class PullRequest:
    """One PR of any kind and where it stands in the gates.

    Attributes:
        id: the proposed action's id (``act_…``), the PR's key everywhere.
        kind: ``infra`` | ``dev`` | ``adr``.
        session_id: the session of an infra PR (one PR cycle per session).
        task_id: the dev task of a dev PR.
        author: the agent that proposes and corrects it.
        pr_id, pr_url: the git provider's PR record (absent on dev PRs opened before
            every kind got one).
    """

    id: str
    kind: PrKind
    project_id: str
    session_id: str | None
    task_id: str | None
    author: str
    title: str
    branch: str
    pr_id: str | None
    pr_url: str | None
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
    def from_row(cls, row: Row) -> PullRequest:
        """Build from a ``pull_requests`` row (SQLite gives 0/1 for booleans)."""
        return cls(
            id=row["id"],
            kind=cast(PrKind, row["kind"]),
            project_id=row["project_id"],
            session_id=row["session_id"],
            task_id=row["task_id"],
            author=row["author"],
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

    @classmethod
    def opened(
        cls,
        *,
        id: str,
        kind: PrKind,
        project_id: str,
        author: str,
        title: str,
        branch: str,
        head: str,
        files: Sequence[str],
        pr_id: str | None,
        pr_url: str | None,
        session_id: str | None = None,
        task_id: str | None = None,
    ) -> PullRequest:
        """A PR that was just committed and waits for QA."""
        now = utcnow_iso()
        return cls(
            id=id,
            kind=kind,
            project_id=project_id,
            session_id=session_id,
            task_id=task_id,
            author=author,
            title=title,
            branch=branch,
            pr_id=pr_id,
            pr_url=pr_url,
            head=head,
            files=tuple(sorted(files)),
            findings=(),
            gate_status="awaiting_qa",
            gate_correction_count=0,
            blocked=False,
            blocked_reason=None,
            created_at=now,
            updated_at=now,
        )

    @property
    def pr_action_id(self) -> str:
        """The name the infra API and events have always used for :attr:`id`."""
        return self.id

    @property
    def state(self) -> GateSubjectState:
        """The gate columns as the state machine sees them."""
        return GateSubjectState(self.gate_status, self.gate_correction_count, self.blocked_reason)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``GET /api/prs/{id}``, the approvals list)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "pr_action_id": self.id,
            "project_id": self.project_id,
            "session_id": self.session_id,
            "task_id": self.task_id,
            "author": self.author,
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


class PullRequests:
    """Reads and writes of ``pull_requests``; writes happen in the caller's transaction.

    Every gate move goes through :meth:`transition`: one ``UPDATE … WHERE id = … AND
    gate_status = <expected> AND gate_correction_count = <expected>`` plus a
    ``gate_history`` row, inside the caller's transaction. A writer that read a stale state
    changes zero rows and gets :class:`ConflictError`, so two operators approving at once
    cannot both win, and no read-then-write race can lose an update.
    """

    def __init__(self, db: Database) -> None:
        self.db = db

    def insert(self, tx: Tx, pr: PullRequest, *, actor: str) -> None:
        """Insert a freshly opened PR and the first timeline row."""
        tx.execute(
            "pr_insert",
            {
                "id": pr.id,
                "kind": pr.kind,
                "project_id": pr.project_id,
                "session_id": pr.session_id,
                "task_id": pr.task_id,
                "author": pr.author,
                "title": pr.title,
                "branch": pr.branch,
                "pr_id": pr.pr_id,
                "pr_url": pr.pr_url,
                "head": pr.head,
                "files": dumps(list(pr.files)),
                "findings": dumps([]),
                "gate_status": pr.gate_status,
                "blocked": False,
                "now": pr.created_at,
            },
        )
        _add_history(
            tx, pr.id, None, pr.gate_status, actor, f"PR opened on {pr.branch} ({pr.head[:10]})"
        )

    def get(self, pr_id: str) -> PullRequest:
        """The PR with id ``pr_id``.

        Raises:
            NotFoundError: no such PR.
        """
        with self.db.transaction(write=False) as tx:
            row = tx.one("pr_get", {"id": pr_id})
        if row is None:
            raise NotFoundError(f"no pull request with id {pr_id!r}", pr_action_id=pr_id)
        return PullRequest.from_row(row)

    def infra_of_session(self, session_id: str) -> PullRequest | None:
        """The session's infra PR (one infra PR cycle per session), if any."""
        with self.db.transaction(write=False) as tx:
            row = tx.one("pr_infra_of_session", {"session_id": session_id})
        return PullRequest.from_row(row) if row is not None else None

    def of_task(self, task_id: str) -> PullRequest | None:
        """The dev task's PR, if it was opened."""
        with self.db.transaction(write=False) as tx:
            row = tx.one("pr_of_task", {"task_id": task_id})
        return PullRequest.from_row(row) if row is not None else None

    def in_review(
        self, project_id: str | None = None, kind: PrKind | None = None
    ) -> list[PullRequest]:
        """Every PR not merged or closed (of one project/kind, or all), oldest first."""
        with self.db.transaction(write=False) as tx:
            rows = tx.all("prs_in_review", {"project_id": project_id, "kind": kind})
        return [PullRequest.from_row(r) for r in rows]

    def in_review_page(
        self,
        project_id: str | None,
        kind: PrKind | None,
        after: tuple[Any, ...] | None,
        limit: int,
    ) -> list[PullRequest]:
        """At most ``limit`` open PRs after the keyset ``after`` (created_at, id), oldest first."""
        at, ident = after or (None, None)
        params = {"project_id": project_id, "kind": kind, "after_at": at, "after_id": ident}
        with self.db.transaction(write=False) as tx:
            rows = tx.all("prs_in_review_page", {**params, "limit": limit})
        return [PullRequest.from_row(r) for r in rows]

    def transition(
        self,
        tx: Tx,
        pr: PullRequest,
        state: GateSubjectState,
        *,
        actor: str,
        note: str | None = None,
        findings: Sequence[Finding] | None = None,
        head: str | None = None,
        files: Sequence[str] | None = None,
    ) -> PullRequest:
        """Store ``state`` (and optionally new findings/head/files) if ``pr`` is current.

        Returns:
            The PR as now stored (``updated_at`` aside).

        Raises:
            ConflictError: the stored row moved since ``pr`` was read.
        """
        after = replace(
            pr,
            gate_status=state.status,
            gate_correction_count=state.correction_count,
            blocked=state.blocked,
            blocked_reason=state.blocked_reason,
            findings=pr.findings if findings is None else tuple(findings),
            head=head or pr.head,
            files=pr.files if files is None else tuple(files),
        )
        changed = tx.execute(
            "pr_transition",
            {
                "key": pr.id,
                "from_status": pr.gate_status,
                "from_count": pr.gate_correction_count,
                "to_status": state.status,
                "to_count": state.correction_count,
                "blocked": state.blocked,
                "blocked_reason": state.blocked_reason,
                "findings": dumps(list(after.findings)),
                "head": after.head,
                "files": dumps(list(after.files)),
                "now": utcnow_iso(),
            },
        )
        if changed != 1:
            raise ConflictError(
                f"{pr.id} is no longer {pr.gate_status} (correction "
                f"{pr.gate_correction_count}); another action changed it first",
                key=pr.id,
                expected=pr.gate_status,
            )
        _add_history(tx, pr.id, pr.gate_status, state.status, actor, note)
        return after

    def current(self, tx: Tx, pr_id: str) -> PullRequest:
        """The PR as ``tx`` sees it (e.g. after locking its row)."""
        row = tx.one("pr_get", {"id": pr_id})
        if row is None:
            raise NotFoundError(f"no PR with id {pr_id}", id=pr_id)
        return PullRequest.from_row(row)

    def note(self, tx: Tx, pr: PullRequest, actor: str, note: str) -> None:
        """A timeline step that does not move the PR (e.g. one approval of several)."""
        _add_history(tx, pr.id, pr.gate_status, pr.gate_status, actor, note)

    def history(self, pr_id: str) -> list[HistoryEntry]:
        """The PR's gate timeline, oldest first."""
        with self.db.transaction(write=False) as tx:
            return [HistoryEntry.from_row(r) for r in tx.all("gate_history_of", {"subject": pr_id})]


def _add_history(
    tx: Tx, subject: str, from_status: str | None, to_status: str, actor: str, note: str | None
) -> None:
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
