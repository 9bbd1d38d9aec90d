"""The operator's inbox: every item waiting for a human, one list, most urgent first.

:class:`Inbox` reads the owners of each kind of waiting thing (the PR pipeline, the team
store, the guard, the job engine's dead jobs) and turns each into one :class:`InboxItem`
with the routes that act on it and its deadline (:mod:`backend.sla`): one builder per kind
(:attr:`Inbox.builders`), so a new kind is one method and one entry. Order: past its SLA
first, then the kind's weight (:data:`WEIGHTS`), then the oldest. Items of the customer
service belong to no project: a ``project_id`` filter leaves them out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from backend.agents.approvals import iso_utc
from backend.agents.store import TeamStore
from backend.agents.team import CUSTOMER_SERVICE
from backend.clock import parse_moment, utc_iso
from backend.dead_jobs import DeadJobs
from backend.exceptions import CadenciaError
from backend.guard.assembly import Guard
from backend.guard.takeovers import ledger_facts
from backend.guard.uncertain import item_id
from backend.jobs import Job
from backend.prs.actions import PrPipeline
from backend.prs.authoring import NO_CHANGE
from backend.prs.records import PullRequest
from backend.sla import Slas, SlaState
from backend.tools.registry import tool_spec

InboxKind = Literal[
    "pr",
    "pr_blocked",
    "pr_stuck",
    "job_dead",
    "unanswered",
    "action_approval",
    "handoff",
    "interruption",
    "uncertain",
]
ReasonRule = Literal["required", "optional", "none"]

WEIGHTS: dict[str, int] = {
    "interruption": 0,
    "uncertain": 1,
    "unanswered": 1,
    "pr_stuck": 2,
    "job_dead": 2,
    "action_approval": 3,
    "pr": 4,
    "pr_blocked": 5,
    "handoff": 6,
}


@dataclass(frozen=True)
class InboxAction:
    """One route that acts on an item (always ``POST``), and whether it takes a reason."""

    name: str
    path: str
    reason: ReasonRule
    method: str = "POST"

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"name": self.name, "method": self.method, "path": self.path, "reason": self.reason}


@dataclass(frozen=True)
class InboxItem:
    """One thing waiting for a human (see the module docstring)."""

    kind: str
    target_id: str
    project_id: str | None
    title: str
    detail: str
    since: str
    state: str
    actions: tuple[InboxAction, ...]
    pr_kind: str | None = None
    project_name: str | None = None
    age_s: float = field(default=0.0)
    due_at: str = ""
    """When its SLA runs out (ISO 8601 UTC): ``since`` + the kind's SLA."""
    sla_state: SlaState = "ok"
    session_id: str | None = None

    @property
    def id(self) -> str:
        """``<kind>:<target_id>``: unique in one list."""
        return f"{self.kind}:{self.target_id}"

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``GET /api/inbox``)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "target_id": self.target_id,
            "project_id": self.project_id,
            "project_name": self.project_name,
            "title": self.title,
            "detail": self.detail,
            "since": self.since,
            "age_s": self.age_s,
            "state": self.state,
            "pr_kind": self.pr_kind,
            "session_id": self.session_id,
            "due_at": self.due_at,
            "sla_state": self.sla_state,
            "actions": [a.to_dict() for a in self.actions],
        }


def urgency(item: InboxItem) -> tuple[int, int, str, str]:
    """Sort key: breached items first, then by kind (:data:`WEIGHTS`), the oldest first."""
    return (item.sla_state != "breached", WEIGHTS.get(item.kind, 99), item.since, item.id)


def _actions(base: str, *names: tuple[str, ReasonRule]) -> tuple[InboxAction, ...]:
    return tuple(InboxAction(name, f"{base}/{name}", reason) for name, reason in names)


def _moment(since: str, now: datetime) -> datetime:
    """``since`` as a UTC datetime (an unreadable stamp counts as now)."""
    return parse_moment(since) or now


def _one_line(text: Any, limit: int = 200) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class Inbox:
    """Everything waiting for a human, over the pipeline, the team store and the guard."""

    def __init__(
        self,
        pipeline: PrPipeline,
        store: TeamStore,
        guard: Guard,
        dead_jobs: DeadJobs | None = None,
        slas: Slas | None = None,
    ) -> None:
        self.slas = slas or Slas()
        self.pipeline = pipeline
        self.store = store
        self.guard = guard
        self.dead_jobs = dead_jobs
        self.builders: dict[str, Callable[[str | None], list[InboxItem]]] = {
            "pr": self._prs,
            "pr_blocked": self._blocked,
            "pr_stuck": self._stuck,
            "job_dead": self._dead_jobs,
            "unanswered": self._unanswered,
            "action_approval": self._approvals,
            "handoff": self._handoffs,
            "interruption": self._interruptions,
            "uncertain": self._uncertain,
        }

    def items(self, project_id: str | None = None, kind: str | None = None) -> list[InboxItem]:
        """The inbox (of one project, of one kind), most urgent first.

        A kind without a builder in this backend lists nothing.
        """
        builders = [build for name, build in self.builders.items() if kind is None or name == kind]
        found = [item for build in builders for item in build(project_id)]
        names = {p.id: p.name for p in self.store.projects()}
        now = datetime.now(UTC)
        out = []
        for item in found:
            since = _moment(item.since, now)
            deadline = self.slas.deadline(item.kind, since, now)
            out.append(
                replace(
                    item,
                    project_name=names.get(item.project_id) if item.project_id else None,
                    age_s=round(max(0.0, (now - since).total_seconds()), 1),
                    due_at=utc_iso(deadline.due_at),
                    sla_state=deadline.state,
                )
            )
        out.sort(key=urgency)
        return out

    # -- one builder per kind --------------------------------------------------------------

    def _prs_in(self, project_id: str | None, status: str) -> list[PullRequest]:
        return [pr for pr in self.pipeline.open_prs(project_id) if pr.gate_status == status]

    def _prs(self, project_id: str | None) -> list[InboxItem]:
        items = []
        for pr in self._prs_in(project_id, "awaiting_human"):
            corrections = pr.gate_correction_count
            detail = (
                f"QA and SecOps passed; {corrections} correction(s); "
                f"{len(pr.findings)} finding(s) on record"
            )
            given = self.pipeline.approval_count(pr)
            if given.required > 1 or given.approvers:
                detail = f"{given.text()}; {detail}"
            items.append(
                self._pr_item(
                    "pr",
                    pr,
                    detail,
                    _actions(
                        f"/api/prs/{pr.id}",
                        ("approve", "optional"),
                        ("reject", "required"),
                        ("close", "optional"),
                    ),
                )
            )
        return items

    def _blocked(self, project_id: str | None) -> list[InboxItem]:
        return [
            self._pr_item(
                "pr_blocked",
                pr,
                f"blocked: {pr.blocked_reason or 'correction limit reached'}",
                _actions(f"/api/prs/{pr.id}", ("unblock", "optional"), ("close", "optional")),
            )
            for pr in self._prs_in(project_id, "blocked")
        ]

    def _stuck(self, project_id: str | None) -> list[InboxItem]:
        """PRs nothing will move on its own: a correction the author could not make ("no
        change": the PR stays ``changes_requested`` and only a human can end it or the
        author try again). A gate job that died for good is a ``job_dead`` item."""
        items = []
        for pr in self._prs_in(project_id, "changes_requested"):
            timeline = self.pipeline.timeline(pr.id)
            last = timeline[-1] if timeline else None
            if last is None or not (last.note or "").startswith(NO_CHANGE):
                continue  # the author is still working on it
            items.append(
                self._pr_item(
                    "pr_stuck",
                    pr,
                    f"the author made no change: {last.note}",
                    _actions(f"/api/prs/{pr.id}", ("close", "optional")),
                    since=iso_utc(last.ts),
                )
            )
        return items

    def _unanswered(self, project_id: str | None) -> list[InboxItem]:
        """Customers whose message no agent will answer (atendimento paused or over
        budget): resume the agent, or answer them as a person."""
        if project_id is not None:
            return []
        resume = (InboxAction("resume", f"/api/agents/{CUSTOMER_SERVICE}/resume", "none"),)
        return [
            InboxItem(
                kind="unanswered",
                target_id=str(row["conversa_id"]),
                project_id=None,
                title=_one_line(f"customer waiting in {row['conversa_id']}: no agent will answer"),
                detail=_one_line(str(row["reason"])),
                since=iso_utc(row["since"]),
                state="waiting",
                actions=resume,
            )
            for row in self.guard.conversations.unanswered()
        ]

    def _dead_jobs(self, project_id: str | None) -> list[InboxItem]:
        """Jobs that ran out of attempts: rerun them (fresh attempts) or drop them."""
        if self.dead_jobs is None:
            return []
        items = []
        for job in self.dead_jobs.all():
            title, project, pr_kind = self._job_subject(job)
            if project_id is not None and project != project_id:
                continue
            items.append(
                InboxItem(
                    kind="job_dead",
                    target_id=str(job.id),
                    project_id=project,
                    title=_one_line(f"{job.kind} job stopped: {title}"),
                    detail=_one_line(
                        f"out of attempts ({job.attempts}/{job.max_attempts}): "
                        f"{job.last_error or 'no error recorded'}"
                    ),
                    since=iso_utc(job.updated_at),
                    state="dead",
                    actions=_actions(
                        f"/api/jobs/{job.id}", ("rerun", "optional"), ("drop", "optional")
                    ),
                    pr_kind=pr_kind,
                )
            )
        return items

    def _job_subject(self, job: Job) -> tuple[str, str | None, str | None]:
        """What a dead job was doing, in the operator's words: (title, project, PR kind)."""
        pr_id = job.payload.get("pr_id")
        if isinstance(pr_id, str):
            try:
                pr = self.pipeline.get(pr_id)
            except CadenciaError:
                return f"PR {pr_id}", None, None
            return f"{pr.kind} PR {pr.id} by {pr.author}: {pr.title}", pr.project_id, pr.kind
        shown = ", ".join(f"{k}={v}" for k, v in sorted(job.payload.items()))
        return shown or job.unique_key or f"job {job.id}", None, None

    def _pr_item(
        self,
        kind: str,
        pr: PullRequest,
        detail: str,
        actions: tuple[InboxAction, ...],
        *,
        since: str | None = None,
    ) -> InboxItem:
        return InboxItem(
            kind=kind,
            target_id=pr.id,
            project_id=pr.project_id,
            title=_one_line(f"{pr.kind} PR by {pr.author}: {pr.title}"),
            detail=_one_line(detail),
            since=since or iso_utc(pr.updated_at),
            state=pr.gate_status,
            actions=actions,
            pr_kind=pr.kind,
            session_id=pr.session_id,
        )

    def _approvals(self, project_id: str | None) -> list[InboxItem]:
        items = []
        for approval in self.store.approvals.pending():
            if project_id is not None and approval.project_id != project_id:
                continue
            what = approval.payload.get("title") or approval.payload.get("task_id") or ""
            items.append(
                InboxItem(
                    kind="action_approval",
                    target_id=approval.id,
                    project_id=approval.project_id,
                    title=_one_line(
                        f"{approval.agent} asks to {approval.action}"
                        + (f": {what}" if what else "")
                    ),
                    detail=_one_line(
                        f"decide() asked at {approval.stage or '?'}: {approval.rule or '?'}"
                    ),
                    since=approval.created_at,
                    state="pending",
                    session_id=approval.session_id,
                    actions=_actions(
                        f"/api/approvals/{approval.id}",
                        ("approve", "optional"),
                        ("reject", "required"),
                    ),
                )
            )
        return items

    def _handoffs(self, project_id: str | None) -> list[InboxItem]:
        return [
            InboxItem(
                kind="handoff",
                target_id=h.id,
                project_id=h.project_id,
                title=_one_line(f"handoff {h.from_agent} → {h.to_agent}"),
                detail=_one_line(h.note or f"{h.from_agent} offers the work to {h.to_agent}"),
                since=iso_utc(h.offered_at),
                state="offered",
                session_id=h.session_id,
                actions=_actions(
                    f"/api/handoffs/{h.id}", ("accept", "none"), ("decline", "optional")
                ),
            )
            for h in self.store.handoffs(project_id, status="offered")
        ]

    def _interruptions(self, project_id: str | None) -> list[InboxItem]:
        if project_id is not None:
            return []
        items = []
        for i in self.guard.interruptions.unresolved():
            spec = tool_spec(i.ferramenta)
            who = f" (claimed by {i.claimed_by})" if i.claimed_by else ""
            detail = f"{i.motivo} after {i.attempts} attempt(s){who}"
            base = f"/api/interruptions/{i.id}"
            claim: list[tuple[str, ReasonRule]] = [("claim", "none")] if i.status == "open" else []
            names: list[tuple[str, ReasonRule]] = [
                *claim,
                ("resolve", "optional"),
                ("grant", "required"),
            ]
            # An amount the gateway refused for good: the operator corrects it or denies.
            facts = ledger_facts(self.guard.ledger, i) if spec.amount_limit else None
            refused = facts is not None and facts.recusado_pelo_banco
            if facts is not None and refused:
                detail = f"{facts.motivo}; {detail}"
            if i.status == "claimed":
                # The holder finishes the takeover: each way out is its own key.
                names += [
                    ("execute", "none"),
                    ("deny", "optional"),
                    ("hand_back", "none"),
                    ("release", "optional"),
                ]
                if spec.amount_limit:
                    names.append(("edit", "required"))
            elif refused:
                names += [("edit", "required"), ("deny", "optional")]
            items.append(
                InboxItem(
                    kind="interruption",
                    target_id=str(i.id),
                    project_id=None,
                    title=_one_line(
                        f"{i.ferramenta} {spec.entity_field} {i.entidade_id} in {i.conversa_id}"
                    ),
                    detail=_one_line(detail),
                    since=iso_utc(i.opened_at),
                    state=i.status,
                    actions=tuple(
                        InboxAction(name, f"{base}/resolve", reason)
                        if name in ("edit", "deny", "execute", "hand_back")
                        else InboxAction(name, f"{base}/{name}", reason)
                        for name, reason in names
                    ),
                )
            )
        return items

    def _uncertain(self, project_id: str | None) -> list[InboxItem]:
        found = self.guard.orchestrator.uncertain
        if project_id is not None or found is None:
            return []
        items = []
        for record, _age_s in found.items():
            ident = item_id(record.chave)
            valor = f" of {record.valor}" if record.valor else ""
            items.append(
                InboxItem(
                    kind="uncertain",
                    target_id=ident,
                    project_id=None,
                    title=_one_line(
                        f"{record.ferramenta} {record.entidade_id}{valor} in {record.conversa_id}"
                    ),
                    detail=_one_line(
                        f"the gateway's outcome is unknown ({record.chave}); ask it or settle"
                    ),
                    since=iso_utc(record.updated_at),
                    state="resultado_incerto",
                    actions=_actions(
                        f"/api/uncertain/{ident}", ("reconcile", "none"), ("settle", "required")
                    ),
                )
            )
        return items
