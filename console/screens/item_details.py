"""Detail screens of the Inbox kinds that have no screen of their own elsewhere: a held
action (what it would do and why ``decide()`` asked), an offered handoff, an uncertain
refund; and :func:`open_item`, which opens the right screen for any item.

Each refetches when an event touches its item (``approval:<id>``, ``handoff:<id>``), on
``r``, and after an action on it; the keys are the item's own (:class:`InboxKeysScreen`).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from console.exceptions import ApiError, ContractError
from console.inert import inert_assemble, inert_text
from console.messages import ContractBroken
from console.models_inbox import ApprovalOut, HandoffOut, InboxItem
from console.models_operators import AuditEntry
from console.operator_actions import item_key
from console.screens._inbox_keys import InboxKeysScreen
from console.screens.audit import ITEM_ACTIONS_SHOWN, render_item_actions
from console.view import ConsoleView
from console.widgets.footer import KeysFooter
from console.widgets.status_bar import StatusBar


def open_item(app: App[Any], view: ConsoleView, item: InboxItem) -> None:
    """Push the detail screen of ``item``'s kind."""
    from console.screens.interruption_detail import InterruptionDetailScreen
    from console.screens.pr_detail import PrDetailScreen

    if item.kind in ("pr", "pr_blocked", "pr_stuck"):
        app.push_screen(PrDetailScreen(view, item.target_id))
    elif item.kind == "interruption" and item.target_id.isdigit():
        app.push_screen(InterruptionDetailScreen(view, int(item.target_id)))
    else:
        app.push_screen(ItemDetailScreen(view, item))


class ItemDetailScreen(InboxKeysScreen):
    """A held action, a handoff or an uncertain refund: the record, then the outcome."""

    TITLE = "Inbox item"
    CSS_PATH = "detail.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("j", "scroll('down')", "Down", show=False),
        Binding("k", "scroll('up')", "Up", show=False),
    ]

    def __init__(self, view: ConsoleView, item: InboxItem) -> None:
        super().__init__(view)
        self.item = item
        self.record: ApprovalOut | HandoffOut | None = None
        self.actions: list[AuditEntry] = []  # its operator actions (GET /api/audit?target=)
        self.loads = 0
        """Completed fetches (the live-update test watches it)."""

    def compose(self) -> ComposeResult:
        """Status bar, summary, the record, the last action's outcome."""
        yield StatusBar()
        yield Static("Loading…", id="summary")
        with VerticalScroll(id="record-scroll"):
            yield Static(id="record")
            yield Static(id="item-actions")
        yield Static("", id="outcome")
        yield KeysFooter()

    def on_mount(self) -> None:
        """Fetch; refetch when an event or an action touches the item, or on ``r``."""
        super().on_mount()
        self.view.item_changed.subscribe(self, self._item_changed)
        self.view.approvals_changed.subscribe(self, self._inbox_changed)
        self.load()

    def action_scroll(self, direction: str) -> None:
        """Scroll the record."""
        getattr(self.query_one("#record-scroll", VerticalScroll), f"scroll_{direction}")()

    def current_item(self) -> InboxItem | None:
        """The item on screen (its latest copy from the Inbox, else the last one known)."""
        return self.item

    @work(exclusive=True, group="load", exit_on_error=False)
    async def load(self) -> None:
        """Screen-owned: popping the screen cancels a fetch nobody will see."""
        client, item = self.view.client, self.item

        async def record() -> ApprovalOut | HandoffOut | None:
            if item.kind == "action_approval":
                return await client.approval(item.target_id)
            if item.kind == "handoff":
                every = await client.handoffs(status=None)
                return next((h for h in every if h.id == item.target_id), None)
            return None

        try:
            self.record, self.actions = await asyncio.gather(
                record(), client.audit(ITEM_ACTIONS_SHOWN, target=item.target_id)
            )
        except ApiError as exc:
            if isinstance(exc, ContractError):
                self.post_message(ContractBroken(exc.route, exc.field, exc.detail))
            self.query_one("#summary", Static).update(
                inert_text(f"Could not load: {exc.message}", "red")
            )
            return
        self._display()
        self.loads += 1

    def _item_changed(self, key: str) -> None:
        if key in ("*", item_key(self.item)):
            self.load()

    def _inbox_changed(self, _: object) -> None:
        fresh = next((i for i in self.view.inbox if i.id == self.item.id), None)
        if fresh is None and self.item.actions:
            # The item left the Inbox (decided here or elsewhere): nothing is left to act
            # on, so its keys go; the record (refetched on the event) says what happened.
            self.item = self.item.model_copy(update={"actions": []})
            self._display()
        elif fresh is not None and fresh != self.item:
            self.item = fresh
            self._display()
        self.refresh_bindings()

    def _display(self) -> None:
        item = self.item
        self.query_one("#summary", Static).update(
            inert_assemble(
                (f"{item.kind} ", "bold cyan"),
                (item.title, "bold"),
                f"\n{item.detail}\n",
                ("project ", "dim"),
                item.project_name or item.project_id or "—",
                ("  since ", "dim"),
                item.since,
                ("  state ", "dim"),
                # The record is fetched after the item: its status is the newer word.
                (getattr(self.record, "status", None) or item.state, "bold"),
            )
        )
        self.query_one("#record", Static).update(self._record_text())
        self.query_one("#item-actions", Static).update(render_item_actions(self.actions))
        outcome = self.view.outcomes.get(item_key(item))
        self.query_one("#outcome", Static).update(
            inert_assemble(("last action: ", "bold"), (outcome.text, outcome.style))
            if outcome
            else ""
        )

    def _record_text(self) -> Text:
        record = self.record
        if isinstance(record, ApprovalOut):
            why = f"decide() asked at stage {record.stage or '?'}, rule {record.rule or '?'}"
            decided = (
                f"\n{record.status} by {record.decided_by} at {record.decided_at}: "
                f"{record.reason or ''}"
                if record.decided_by
                else ""
            )
            result = f"\nresult: {json.dumps(record.result)}" if record.result else ""
            return inert_assemble(
                ("Proposed action: ", "bold"),
                (record.action, "bold yellow"),
                f" by {record.agent or '?'}\n",
                ("Why it waits: ", "bold"),
                why,
                f"\nstatus: {record.status}{decided}{result}\n\n",
                ("Payload\n", "bold underline"),
                json.dumps(record.payload, indent=2, ensure_ascii=False, sort_keys=True),
            )
        if isinstance(record, HandoffOut):
            accepted = (
                f"\naccepted by {record.accepted_by} at {record.accepted_at}"
                if record.accepted_by
                else ""
            )
            return inert_assemble(
                ("Handoff ", "bold"),
                (f"{record.from_agent} → {record.to_agent}", "bold yellow"),
                f"\nstatus: {record.status} · offered {record.offered_at}{accepted}\n",
                ("Note: ", "bold"),
                record.note or "(none)",
            )
        if self.item.kind == "uncertain":
            return Text(
                "The gateway's answer for this refund is unknown: did the money move?\n"
                "c reconcile asks the gateway by its idempotency key; s settles by hand.",
            )
        return Text("(no record)", style="dim")
