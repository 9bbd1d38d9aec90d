"""The takeover screen (``enter`` on an interruption): the live conversation with each
outbound message's delivery, what the ledger holds for the order, the attempts, a reply
box, and the keys to finish the takeover by hand."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Label, Static

from console.exceptions import ApiError, ContractError
from console.feed import short_ts
from console.inert import inert, inert_text
from console.messages import ContractBroken
from console.models import Conversation, InterruptionDetail
from console.models_inbox import InboxItem
from console.operator_actions import READONLY_REASON
from console.screens._inbox_keys import InboxKeysScreen
from console.screens.audit import render_item_actions
from console.state import resultado_style
from console.takeover import delivery_mark, execute_warning, ledger_text
from console.view import ConsoleView
from console.widgets.footer import KeysFooter
from console.widgets.status_bar import StatusBar

ROLE_STYLE = {"cliente": "bold cyan", "agente": "green", "operador": "bold magenta"}
ATTEMPT_COLUMNS = (
    ("tentativaNumero", 15),
    ("resultado", 26),
    ("timestamp", 19),
    ("ferramenta", 18),
    ("chaveIdempotencia", 28),
)
"""Fixed widths: the table reads the same whatever arrives first, rows or a redraw."""
DELIVERY_POLL_S = 1.0
"""While an outbound message is still pending, its delivery is refetched this often."""
TAKEOVER_ACTIONS_SHOWN = 3
"""The takeover screen is the conversation's: it shows only its newest operator actions."""


class InterruptionDetailScreen(InboxKeysScreen):
    """What the customer says (live), what the agent tried, what the ledger holds, and the
    keys to answer the customer and finish the takeover by hand."""

    TITLE = "Takeover"
    CSS_PATH = "detail.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("i", "focus_reply", "Reply", tooltip="write to the customer (enter sends)"),
        Binding("escape", "back", "Back"),
        Binding("j", "scroll('down')", "Down", show=False),
        Binding("k", "scroll('up')", "Up", show=False),
    ]

    def __init__(self, view: ConsoleView, interruption_id: int) -> None:
        super().__init__(view)
        self.interruption_id = interruption_id
        self.detail: InterruptionDetail | None = None
        self.conversation: Conversation | None = None
        self._conversation_problem = ""
        self._shown_attempts: list[tuple[str, ...]] = []

    def compose(self) -> ComposeResult:
        """Status bar, summary, ledger, outcome, transcript, attempts, reply box."""
        yield StatusBar()
        yield Static("Loading…", id="summary")
        yield Static("", id="ledger")
        yield Static("", id="outcome")
        yield Static("", id="item-actions")
        with Vertical(id="transcript-pane"):
            yield Label("Conversation", id="conversation-title", classes="pane-title")
            with VerticalScroll(id="transcript-scroll"):
                yield Static(id="transcript")
        with Vertical(id="attempts-pane"):
            yield Label("Attempts (ledger)", classes="pane-title")
            yield DataTable(id="attempts", cursor_type="row", zebra_stripes=True)
        yield Input(id="reply", disabled=True, placeholder="take over (t) to reply")
        yield KeysFooter()

    def on_mount(self) -> None:
        """Fetch; refetch when an action or an event touches this takeover or conversation."""
        super().on_mount()
        table = self.query_one("#attempts", DataTable)
        for key, width in ATTEMPT_COLUMNS:
            table.add_column(key, key=key, width=width)
        self.view.item_changed.subscribe(self, self._item_changed)
        self.view.conversation_changed.subscribe(self, self._conversation_changed)
        self.view.approvals_changed.subscribe(self, lambda _: self.refresh_bindings())
        self.set_interval(DELIVERY_POLL_S, self._poll_delivery)
        self.query_one("#transcript-scroll").focus()
        self.load()

    @on(Input.Submitted, "#reply")
    def _reply_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text or self.detail is None:
            return
        if self.view.actions.send_reply(self.detail, text):
            event.input.value = ""

    def action_scroll(self, direction: str) -> None:
        """Scroll the transcript."""
        getattr(self.query_one("#transcript-scroll", VerticalScroll), f"scroll_{direction}")()

    def action_focus_reply(self) -> None:
        """``i``: type a reply (only while the takeover is yours)."""
        box = self.query_one("#reply", Input)
        if box.disabled:
            self.notify(f"Reply is off: {box.placeholder}", severity="warning", timeout=3)
        else:
            box.focus()

    def action_back(self) -> None:
        """``esc``: leave the reply box, else go back."""
        if isinstance(self.focused, Input):
            self.query_one("#transcript-scroll").focus()
        else:
            self.app.pop_screen()

    def current_item(self) -> InboxItem | None:
        """The takeover's Inbox item (what the server says can be done to it now); none
        once it is resolved, where no key is left."""
        key = f"interruption:{self.interruption_id}"
        return next((i for i in self.view.inbox if i.id == key), None)

    @work(exclusive=True, group="load", exit_on_error=False)
    async def load(self) -> None:
        """Screen-owned: popping the screen cancels a fetch nobody will see."""
        try:
            detail, actions = await asyncio.gather(
                self.view.client.interruption(self.interruption_id),
                self.view.client.audit(TAKEOVER_ACTIONS_SHOWN, target=str(self.interruption_id)),
            )
        except ApiError as exc:
            if isinstance(exc, ContractError):
                self.post_message(ContractBroken(exc.route, exc.field, exc.detail))
            self.query_one("#summary", Static).update(
                inert_text(f"Could not load: {exc.message}", "red")
            )
            return
        self.detail = detail
        await self._fetch_conversation(detail.conversation)
        self._display(detail)
        self.query_one("#item-actions", Static).update(render_item_actions(actions, when=False))

    @work(exclusive=True, group="conversation", exit_on_error=False)
    async def load_conversation(self) -> None:
        """Only the conversation (a message arrived, a delivery moved)."""
        if self.detail is None:
            return
        await self._fetch_conversation(self.detail.conversation)
        self._show_transcript(self.detail)

    def _item_changed(self, key: str) -> None:
        if key in ("*", f"int:{self.interruption_id}"):
            self.load()

    def _conversation_changed(self, conversa_id: str) -> None:
        if self.detail is not None and conversa_id == self.detail.conversation:
            self.load_conversation()

    def _poll_delivery(self) -> None:
        if self.conversation is not None and any(
            m.delivery is not None and m.delivery.status == "pending"
            for m in self.conversation.messages
        ):
            self.load_conversation()

    async def _fetch_conversation(self, conversa_id: str) -> None:
        try:
            self.conversation = await self.view.client.conversation(conversa_id)
            self._conversation_problem = ""
        except ApiError as exc:
            if isinstance(exc, ContractError):
                self.post_message(ContractBroken(exc.route, exc.field, exc.detail))
            self._conversation_problem = exc.message

    def _display(self, d: InterruptionDetail) -> None:
        mine = d.status == "claimed" and d.claimed_by == self.view.actions.operator
        if d.status == "open":
            hint = ("press t to take over", "bold red")
        elif mine:
            hint = (
                "yours: i reply · e execute · v edit valor · d deny · h hand back",
                "bold green",
            )
        elif d.status == "claimed":
            hint = (f"claimed by {d.claimed_by}", "yellow")
        else:
            ran = f" ({d.outcome})" if d.outcome else ""
            granted = f" · {d.grant_left} granted attempts left" if d.grant_left else ""
            hint = (f"resolved: {d.resolution or ''}{ran} — {d.reply or ''}{granted}", "dim")
        args = ", ".join(f"{k}={v}" for k, v in d.argumentos.items())
        self.query_one("#summary", Static).update(
            Text.assemble(
                (f"#{d.id} ", "bold"),
                (inert(d.motivo), "bold red"),
                inert(f" · conversa {d.conversation} · {d.entity_text()}") + "\n",
                (inert(d.ferramenta), "bold"),
                inert(f"({args}) · {len(d.attempts)} attempts · since {d.since}") + "\n",
                (inert(hint[0]), hint[1]),
            )
        )
        warning, style = execute_warning(d.ledger, d.ferramenta)
        self.query_one("#ledger", Static).update(
            Text.assemble((inert(ledger_text(d.ledger)), "bold"), "\n", (inert(warning), style))
        )
        outcome = self.view.outcomes.get(f"int:{d.id}")
        self.query_one("#outcome", Static).update(
            Text.assemble(("last action: ", "bold"), (inert(outcome.text), outcome.style))
            if outcome
            else ""
        )
        self._show_reply_box(mine)
        self._show_transcript(d)
        rows: list[tuple[str, ...]] = [
            (
                str(a.tentativaNumero),
                a.resultado,
                a.timestamp[:19],
                a.ferramenta,
                a.chaveIdempotencia or "",
            )
            for a in d.attempts
        ]
        if rows != self._shown_attempts:  # a reload that changed nothing redraws nothing
            self._shown_attempts = rows
            table = self.query_one("#attempts", DataTable)
            table.clear()
            for n, resultado, *rest in rows:
                table.add_row(
                    n,
                    inert_text(resultado, resultado_style(resultado)),
                    *(inert_text(cell) for cell in rest),
                )

    def _show_reply_box(self, mine: bool) -> None:
        box = self.query_one("#reply", Input)
        if self.view.actions.readonly:
            box.disabled, box.placeholder = True, f"{READONLY_REASON}: replies are off"
        elif not mine:
            box.disabled, box.placeholder = True, "take over (t) to reply"
        else:
            box.disabled = False
            box.placeholder = "reply to the customer — enter sends (i to focus, esc to leave)"

    def _show_transcript(self, d: InterruptionDetail) -> None:
        conv = self.conversation
        title = self.query_one("#conversation-title", Label)
        transcript = Text()
        if conv is None:
            title.update(
                inert_text(f"Conversation (not live: {self._conversation_problem or 'loading'})")
            )
            for line in d.transcript:
                transcript.append(f"{short_ts(line.ts)} ", "dim")
                transcript.append(inert(f"{line.role:>8} "), ROLE_STYLE.get(line.role, "bold"))
                transcript.append(f"{inert(line.text)}\n")
        else:
            holder = f"human: {conv.operator}" if conv.state == "human" else "bot"
            problem = self._conversation_problem
            title.update(
                inert_text(
                    f"Conversation {conv.id} — held by {holder}"
                    + (f" (refresh failed: {problem})" if problem else "")
                )
            )
            for m in conv.messages:
                transcript.append(f"{short_ts(m.ts)} ", "dim")
                transcript.append(inert(f"{m.autor:>8} "), ROLE_STYLE.get(m.autor, "bold"))
                transcript.append(inert(m.texto))
                mark, style = delivery_mark(m.delivery)
                if mark:
                    transcript.append(f"  {inert(mark, multiline=False)}", style)
                transcript.append("\n")
        self.query_one("#transcript", Static).update(transcript or Text("(empty)", "dim"))
        scroll = self.query_one("#transcript-scroll", VerticalScroll)
        scroll.scroll_end(animate=False)
