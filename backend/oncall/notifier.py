"""Pages and chat messages about inbox items, sent once each from a durable outbox.

A recurring ``oncall.sweep`` job (one process per tick) compares the inbox with the
``pages`` table and, in one transaction, records what changed and enqueues one job per
message. Per item (``dedup_key`` = its id): chat "new" when first seen; past its SLA, a
PagerDuty ``trigger`` (severity by kind), chat "breached" and, for an unclaimed takeover,
one holding message to the customer; at twice the SLA a ``critical`` trigger to the
escalation key; ``acknowledge`` on a claim (a release pages again); ``resolve`` and chat
"resolved" when it leaves the inbox.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from backend.clock import utcnow_iso
from backend.jobs import Backoff, Job, Jobs
from backend.oncall.senders import chat_message, pagerduty_event, post_json
from backend.settings import Settings
from backend.sla import Slas
from backend.store.db import Database, Tx

log = logging.getLogger(__name__)

SWEEP, PAGE, CHAT, HOLD = "oncall.sweep", "oncall.page", "oncall.chat", "oncall.hold"
SEVERITY = {
    "interruption": "critical",
    "unanswered": "critical",
    "uncertain": "critical",
    "job_dead": "error",
    "pr_stuck": "error",
}
"""PagerDuty severity per inbox kind; the rest page as ``warning``."""


class OnCall:
    """The on-call outbox of one backend (see the module docstring).

    Args:
        db: the state database (``pages``, and the jobs).
        jobs: the engine the three kinds are registered on.
        inbox_items: the inbox now (of one kind, given one), with each item's ``sla_state``.
        slas: each kind's SLA (escalation comes at twice it).
        settings: the PagerDuty keys and URL, the chat webhook, the sweep's period.
        hold: tells the customer of a takeover (by id) that a person will answer, unless
            someone claimed it meanwhile; whether it told.
    """

    def __init__(
        self,
        db: Database,
        jobs: Jobs,
        inbox_items: Callable[[str | None, str | None], list[Any]],
        slas: Slas,
        settings: Settings,
        hold: Callable[[str], bool] | None = None,
    ) -> None:
        self.db = db
        self.hold = hold
        self.jobs = jobs
        self.inbox_items = inbox_items
        self.slas = slas
        self.settings = settings
        base = settings.public_url or f"http://{settings.host}:{settings.port}"
        self.base_url = base.rstrip("/")
        self.source = settings.public_url or f"cadencia@{socket.gethostname()}"
        retry = Backoff(base_s=1.0, max_s=60.0)
        jobs.register(SWEEP, self.sweep, max_attempts=3)
        # One at a time, oldest first: a trigger goes before its acknowledge and resolve.
        jobs.register(PAGE, self._page, max_attempts=20, backoff=retry)
        jobs.register(CHAT, self._chat, max_attempts=20, backoff=retry)
        jobs.register(HOLD, self._hold, max_attempts=5, backoff=retry)

    def schedule(self) -> None:
        """Start the recurring sweep (a customer waiting on a takeover is told even when
        no pager is configured)."""
        self.jobs.every(SWEEP, self.settings.oncall_sweep_s)

    # -- the sweep ---------------------------------------------------------------------------

    def sweep(self, job: Job | None = None) -> int:
        """Compare the inbox with what was sent and enqueue what is due; how many messages."""
        # With no pager and no chat, only a takeover's holding message is left to send:
        # the sweep reads that kind alone, not the whole inbox every tick.
        told = self.settings.pagerduty_routing_key or self.settings.notify_webhook_url
        items = self.inbox_items(None, None if told else "interruption")
        with self.db.transaction(write=False) as tx:
            known = {str(r["item_id"]): r for r in tx.all("pages_open")}
        now = datetime.now(UTC)
        changes: list[Callable[[Tx], int]] = []
        for item in items:
            row = known.get(item.id)
            changes += self._changes(item, row, now)
        current = {i.id for i in items}
        changes += [self._gone(item_id) for item_id in known if item_id not in current]
        if not changes:
            return 0
        with self.db.transaction() as tx:
            sent = sum(change(tx) for change in changes)
        for kind in (PAGE, CHAT, HOLD):
            self.jobs.wake(kind)
        return sent

    def _changes(self, item: Any, row: Any, now: datetime) -> list[Callable[[Tx], int]]:
        out: list[Callable[[Tx], int]] = []
        if row is None:
            out.append(lambda tx: self._seen(tx, item))
        breached = item.sla_state == "breached"
        released = (
            row is not None
            and item.kind == "interruption"
            and item.state == "open"
            and row["acknowledged_at"] is not None
        )
        if released:
            out.append(lambda tx: self._released(tx, item))
        elif breached and (row is None or row["triggered_at"] is None):
            out.append(lambda tx: self._breached(tx, item))
        if (
            breached
            and self.settings.pagerduty_escalation_key
            and item.age_s >= 2 * self.slas.of(item.kind)
            and (row is None or row["escalated_at"] is None)
        ):
            out.append(lambda tx: self._escalated(tx, item))
        claimed = item.kind == "interruption" and item.state == "claimed"
        if claimed and (row is None or row["acknowledged_at"] is None):
            out.append(lambda tx: self._claimed(tx, item))
        return out

    def _seen(self, tx: Tx, item: Any) -> int:
        row = tx.one(
            "page_seen",
            {"item_id": item.id, "kind": item.kind, "title": item.title, "now": utcnow_iso()},
        )
        return self._tell(tx, "new", item) if row is not None else 0

    def _breached(self, tx: Tx, item: Any) -> int:
        if tx.one("page_triggered", {"item_id": item.id, "now": utcnow_iso()}) is None:
            return 0
        sent = self._tell(tx, "breached", item)
        if item.kind == "interruption" and item.state == "open" and self.hold is not None:
            self.jobs.enqueue(
                HOLD, {"interruption": item.target_id}, unique_key=f"hold:{item.id}", tx=tx
            )
            sent += 1
        if self.settings.pagerduty_routing_key:
            sent += self._enqueue_page(tx, "trigger", item, escalation=False)
        return sent

    def _released(self, tx: Tx, item: Any) -> int:
        """A claimed takeover went back to the queue: page it again if it is past its SLA."""
        if tx.one("page_released", {"item_id": item.id}) is None:
            return 0
        return self._breached(tx, item) if item.sla_state == "breached" else 0

    def _escalated(self, tx: Tx, item: Any) -> int:
        if tx.one("page_escalated", {"item_id": item.id, "now": utcnow_iso()}) is None:
            return 0
        return self._enqueue_page(tx, "trigger", item, escalation=True)

    def _claimed(self, tx: Tx, item: Any) -> int:
        row = tx.one("page_acknowledged", {"item_id": item.id, "now": utcnow_iso()})
        if row is None or not self.settings.pagerduty_routing_key:
            return 0
        return self._enqueue_page(tx, "acknowledge", item, escalation=False)

    def _gone(self, item_id: str) -> Callable[[Tx], int]:
        def resolve(tx: Tx) -> int:
            row = tx.one("page_resolved", {"item_id": item_id})
            if row is None:
                return 0
            item = _Gone(item_id, str(row["kind"]), str(row["title"]))
            sent = self._tell(tx, "resolved", item)
            if row["triggered_at"] is not None and self.settings.pagerduty_routing_key:
                sent += self._enqueue_page(tx, "resolve", item, escalation=False)
            if row["escalated_at"] is not None and self.settings.pagerduty_escalation_key:
                sent += self._enqueue_page(tx, "resolve", item, escalation=True)
            return sent

        return resolve

    # -- the outbox --------------------------------------------------------------------------

    def _link(self, kind: str) -> str:
        return f"{self.base_url}/api/inbox?kind={kind}"

    def _enqueue_page(self, tx: Tx, action: str, item: Any, *, escalation: bool) -> int:
        severity = "critical" if escalation else SEVERITY.get(item.kind, "warning")
        payload = {
            "action": action,
            "dedup_key": item.id,
            "escalation": escalation,
            "summary": f"{item.kind} waiting past its SLA: {item.title}",
            "severity": severity,
            "details": _details(item),
            "link": self._link(item.kind),
        }
        key = f"page:{item.id}:{action}:{'escalation' if escalation else 'main'}"
        self.jobs.enqueue(PAGE, payload, unique_key=key, tx=tx)
        return 1

    def _tell(self, tx: Tx, event: str, item: Any) -> int:
        if not self.settings.notify_webhook_url:
            return 0
        payload = {"event": event, "item": _details(item), "link": self._link(item.kind)}
        self.jobs.enqueue(CHAT, payload, unique_key=f"chat:{item.id}:{event}", tx=tx)
        return 1

    def _page(self, job: Job) -> None:
        p = job.payload
        key = (
            self.settings.pagerduty_escalation_key
            if p["escalation"]
            else self.settings.pagerduty_routing_key
        )
        if not key:
            log.warning("oncall: page %s dropped, no routing key is set any more", p["dedup_key"])
            return
        event = pagerduty_event(
            key,
            str(p["action"]),
            str(p["dedup_key"]),
            summary=str(p["summary"]),
            source=self.source,
            severity=str(p["severity"]),
            details=p["details"],
            link=p["link"],
        )
        post_json(self.settings.pagerduty_url, event)

    def _hold(self, job: Job) -> None:
        if self.hold is not None:
            self.hold(str(job.payload["interruption"]))

    def _chat(self, job: Job) -> None:
        url = self.settings.notify_webhook_url
        if not url:
            return
        p = job.payload
        post_json(url, chat_message(str(p["event"]), p["item"], p["link"]))


class _Gone:
    """What is left of an item that left the inbox: enough to say it did."""

    def __init__(self, item_id: str, kind: str, title: str) -> None:
        self.id, self.kind, self.title = item_id, kind, title
        self.since = self.due_at = self.sla_state = self.state = ""
        self.age_s = 0.0
        self.project_id = None


def _details(item: Any) -> dict[str, Any]:
    return {
        "id": item.id,
        "kind": item.kind,
        "title": item.title,
        "since": item.since,
        "due_at": item.due_at,
        "sla_state": item.sla_state,
        "state": item.state,
        "project_id": item.project_id,
    }
