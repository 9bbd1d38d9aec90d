"""Persistence of the team: projects, sessions, handoffs, agent autonomy, pending approvals.

Every state change appends its event in the same transaction (published after commit), so
the roster and activity feed derived from the log always agree with these tables.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from backend.agents.approvals import ApprovalStore, RowMoved, told_outside
from backend.agents.policy import infra_handoff_autonomy
from backend.agents.team import ARQUITETO, INFRA
from backend.events import Event, EventLog, EventType, utcnow_iso
from backend.exceptions import ConflictError, NotFoundError, ValidationError
from backend.store.db import Row, dumps, loads


def new_id(prefix: str) -> str:
    """A short random id with a readable prefix (``prj_…``, ``ses_…``)."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True)
class Project:
    """A project the team works on."""

    id: str
    name: str
    repo_path: str | None
    module_map: dict[str, Any] | None
    execution_activated: bool
    created_at: str

    @classmethod
    def from_row(cls, row: Row) -> Project:
        """Build from a row."""
        return cls(
            id=row["id"],
            name=row["name"],
            repo_path=row["repo_path"],
            module_map=loads(row["module_map"]),
            execution_activated=bool(row["execution_activated"]),
            created_at=str(row["created_at"]),
        )

    def modules(self) -> list[dict[str, Any]]:
        """The module map's modules (empty when none was written)."""
        return list((self.module_map or {}).get("modules", []))


@dataclass(frozen=True)
class Handoff:
    """An offer from one agent to another, accepted by an operator."""

    id: str
    project_id: str
    session_id: str
    from_agent: str
    to_agent: str
    status: str
    note: str | None
    offered_at: str
    accepted_at: str | None
    accepted_by: str | None
    declined_at: str | None = None
    declined_by: str | None = None
    decline_reason: str | None = None

    @classmethod
    def from_row(cls, row: Row) -> Handoff:
        """Build from a row."""
        return cls(
            **{k: (str(v) if k.endswith("_at") and v is not None else v) for k, v in row.items()}
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return dict(self.__dict__)


class TeamStore:
    """Projects, sessions, handoffs, autonomy and approvals over the state database."""

    def __init__(self, events: EventLog) -> None:
        self.events = events
        self.db = events.db
        self.approvals = ApprovalStore(events)

    def _commit(self, events: list[Event]) -> None:
        self.events.publish(events)

    # -- projects and sessions -------------------------------------------------------------

    def create_project(
        self, name: str, *, repo_path: str | None = None, module_map: dict[str, Any] | None = None
    ) -> Project:
        """Create a project."""
        if not name.strip():
            raise ValidationError("project name must not be empty")
        ident = new_id("prj")
        with self.db.transaction() as tx:
            tx.execute(
                "project_insert",
                {
                    "id": ident,
                    "name": name.strip(),
                    "repo_path": repo_path,
                    "module_map": dumps(module_map) if module_map is not None else None,
                    "execution_activated": False,
                    "now": utcnow_iso(),
                },
            )
            event = self.events.append_in(
                tx, EventType.PROJECT_CREATED, {"name": name.strip()}, project_id=ident
            )
        self._commit([event])
        return self.project(ident)

    def project(self, project_id: str) -> Project:
        """One project; :class:`NotFoundError` when unknown."""
        with self.db.transaction(write=False) as tx:
            row = tx.one("project_get", {"id": project_id})
        if row is None:
            raise NotFoundError(f"no project with id {project_id!r}")
        return Project.from_row(row)

    def projects(self) -> list[Project]:
        """Every project, oldest first."""
        with self.db.transaction(write=False) as tx:
            return [Project.from_row(r) for r in tx.all("projects_all")]

    def projects_page(self, after: tuple[Any, ...] | None, limit: int) -> list[Project]:
        """At most ``limit`` projects after the keyset ``after`` (created_at, id), oldest first."""
        at, ident = after or (None, None)
        with self.db.transaction(write=False) as tx:
            rows = tx.all("projects_page", {"after_at": at, "after_id": ident, "limit": limit})
        return [Project.from_row(r) for r in rows]

    def set_module_map(
        self, project_id: str, module_map: dict[str, Any], *, agent: str = ARQUITETO
    ) -> None:
        """Record the Arquiteto's module map."""
        self.project(project_id)
        with self.db.transaction() as tx:
            tx.execute(
                "project_set_module_map", {"id": project_id, "module_map": dumps(module_map)}
            )

    def activate_execution(self, project_id: str) -> Project:
        """Start execution: one dev-<module> per module of the module map."""
        project = self.project(project_id)
        if not project.modules():
            raise ConflictError("the project has no module map yet; the Arquiteto writes it first")
        with self.db.transaction() as tx:
            changed = tx.execute("project_activate", {"id": project_id, "yes": True, "no": False})
            if not changed:
                raise ConflictError(f"execution of project {project_id} is already active")
            event = self.events.append_in(
                tx,
                EventType.EXECUTION_ACTIVATED,
                {"modules": [m["name"] for m in project.modules()]},
                project_id=project_id,
            )
        self._commit([event])
        return self.project(project_id)

    def create_session(self, project_id: str, title: str = "sessão") -> dict[str, Any]:
        """Open a session in a project."""
        self.project(project_id)
        ident = new_id("ses")
        with self.db.transaction() as tx:
            tx.execute(
                "session_insert",
                {"id": ident, "project_id": project_id, "title": title, "now": utcnow_iso()},
            )
            event = self.events.append_in(
                tx,
                EventType.SESSION_CREATED,
                {"title": title},
                project_id=project_id,
                session_id=ident,
            )
        self._commit([event])
        return self.session(ident)

    def session(self, session_id: str) -> dict[str, Any]:
        """One session; :class:`NotFoundError` when unknown."""
        with self.db.transaction(write=False) as tx:
            row = tx.one("session_get", {"id": session_id})
        if row is None:
            raise NotFoundError(f"no session with id {session_id!r}")
        return row

    # -- handoffs and autonomy -------------------------------------------------------------

    def offer_handoff(
        self,
        project_id: str,
        session_id: str,
        from_agent: str,
        to_agent: str,
        note: str | None = None,
    ) -> Handoff:
        """Record a handoff offer; offering the same handoff twice is a :class:`ConflictError`."""
        session = self.session(session_id)
        if session["project_id"] != project_id:
            raise NotFoundError(f"session {session_id} is not in project {project_id}")
        ident = new_id("hof")
        with self.db.transaction() as tx:
            row = tx.one(
                "handoff_insert",
                {
                    "id": ident,
                    "project_id": project_id,
                    "session_id": session_id,
                    "from_agent": from_agent,
                    "to_agent": to_agent,
                    "note": note,
                    "now": utcnow_iso(),
                },
            )
            if row is None:
                raise ConflictError(
                    f"{from_agent} already offered a handoff to {to_agent} in session {session_id}"
                )
            event = self.events.append_in(
                tx,
                EventType.HANDOFF_OFFERED,
                {"handoff_id": ident, "from_agent": from_agent, "to_agent": to_agent, "note": note},
                project_id=project_id,
                session_id=session_id,
                agent=from_agent,
            )
        self._commit([event])
        return self.handoff(ident)

    def handoff(self, handoff_id: str) -> Handoff:
        """One handoff; :class:`NotFoundError` when unknown."""
        with self.db.transaction(write=False) as tx:
            row = tx.one("handoff_get", {"id": handoff_id})
        if row is None:
            raise NotFoundError(f"no handoff with id {handoff_id!r}")
        return Handoff.from_row(row)

    def handoffs(self, project_id: str | None = None, status: str | None = None) -> list[Handoff]:
        """Handoffs of a project (or all), oldest first; only those in ``status`` if given."""
        with self.db.transaction(write=False) as tx:
            rows = (
                tx.all("handoffs_of_project", {"project_id": project_id})
                if project_id
                else tx.all("handoffs_all")
            )
        found = [Handoff.from_row(r) for r in rows]
        return [h for h in found if status is None or h.status == status]

    def handoffs_page(
        self,
        project_id: str | None,
        status: str | None,
        after: tuple[Any, ...] | None,
        limit: int,
    ) -> list[Handoff]:
        """At most ``limit`` handoffs after the keyset ``after`` (offered_at, id), oldest
        first, of one project and status when given (filtered in SQL, on an index)."""
        at, ident = after or (None, None)
        params = {"project_id": project_id, "status": status, "after_at": at, "after_id": ident}
        with self.db.transaction(write=False) as tx:
            rows = tx.all("handoffs_page", {**params, "limit": limit})
        return [Handoff.from_row(r) for r in rows]

    def accept_handoff(self, handoff_id: str, operator: str) -> Handoff:
        """Accept an offered handoff; a handoff to infra seeds its autonomy.

        Accepting an unknown or already-accepted handoff is an error.
        """
        handoff = self.handoff(handoff_id)
        seeded: dict[tuple[str, str], str] = {}
        if handoff.to_agent == INFRA:
            seeded = dict(infra_handoff_autonomy())
        with (
            told_outside(lambda: _not_offered(self.handoff(handoff_id))),
            self.db.transaction() as tx,
        ):
            if not tx.execute(
                "handoff_accept", {"id": handoff_id, "operator": operator, "now": utcnow_iso()}
            ):
                raise RowMoved
            for (agent, action), value in seeded.items():
                tx.execute(
                    "autonomy_upsert",
                    {
                        "project_id": handoff.project_id,
                        "agent": agent,
                        "action": action,
                        "value": value,
                    },
                )
            event = self.events.append_in(
                tx,
                EventType.HANDOFF_ACCEPTED,
                {
                    "handoff_id": handoff_id,
                    "from_agent": handoff.from_agent,
                    "to_agent": handoff.to_agent,
                    "operator": operator,
                    # {action: value} for the receiving agent: what the roster replays
                    "autonomy_seeded": {action: v for (_, action), v in seeded.items()},
                },
                project_id=handoff.project_id,
                session_id=handoff.session_id,
                agent=handoff.to_agent,
            )
        self._commit([event])
        return self.handoff(handoff_id)

    def decline_handoff(self, handoff_id: str, operator: str, reason: str | None = None) -> Handoff:
        """Decline an offered handoff: it leaves the inbox and seeds nothing.

        Raises:
            NotFoundError: unknown handoff.
            ConflictError: the handoff is not ``offered`` (accepted or declined already).
        """
        handoff = self.handoff(handoff_id)
        with (
            told_outside(lambda: _not_offered(self.handoff(handoff_id))),
            self.db.transaction() as tx,
        ):
            if not tx.execute(
                "handoff_decline",
                {"id": handoff_id, "operator": operator, "reason": reason, "now": utcnow_iso()},
            ):
                raise RowMoved
            event = self.events.append_in(
                tx,
                EventType.HANDOFF_DECLINED,
                {
                    "handoff_id": handoff_id,
                    "from_agent": handoff.from_agent,
                    "to_agent": handoff.to_agent,
                    "operator": operator,
                    "reason": reason,
                },
                project_id=handoff.project_id,
                session_id=handoff.session_id,
                agent=handoff.from_agent,
            )
        self._commit([event])
        return self.handoff(handoff_id)

    def autonomy(self, project_id: str) -> dict[tuple[str, str], str]:
        """``{(agent, action): value}`` for a project."""
        with self.db.transaction(write=False) as tx:
            rows = tx.all("autonomy_of_project", {"project_id": project_id})
        return {(r["agent"], r["action"]): r["value"] for r in rows}

    # -- approvals (decide() said ask) -----------------------------------------------------

    def request_approval(
        self,
        *,
        project_id: str | None,
        session_id: str | None,
        agent: str,
        action: str,
        payload: dict[str, Any],
        stage: str,
        rule: str,
    ) -> str:
        """Create a pending approval and its event; returns its id (see :class:`ApprovalStore`)."""
        return self.approvals.request(
            project_id=project_id,
            session_id=session_id,
            agent=agent,
            action=action,
            payload=payload,
            stage=stage,
            rule=rule,
        )

    def pending_approvals(self) -> list[dict[str, Any]]:
        """Approvals waiting for an operator, oldest first, as dicts (see :class:`Approval`)."""
        return [a.to_dict() for a in self.approvals.pending()]


def _not_offered(handoff: Handoff) -> ConflictError:
    who = handoff.accepted_by if handoff.status == "accepted" else handoff.declined_by
    return ConflictError(
        f"handoff {handoff.id} is {handoff.status}"
        + (f" (by {who})" if who else "")
        + ", not offered",
        handoff_id=handoff.id,
        status=handoff.status,
    )
