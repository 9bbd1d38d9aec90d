"""Interruption detail (``enter`` on an interruption): transcript, attempts, takeover keys."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Footer, Label, Static

from console.exceptions import ApiError, ContractError
from console.models import Interruption, InterruptionDetail
from console.screens._base import INTERRUPTION_BINDINGS, OperatorScreen
from console.state import resultado_style
from console.widgets.status_bar import StatusBar

ROLE_STYLE = {"cliente": "bold cyan", "agente": "green", "operador": "bold magenta"}


class InterruptionDetailScreen(OperatorScreen):
    """What the customer asked, what the agent tried, and the buttons to finish it by hand."""

    TITLE = "Interruption"
    CSS_PATH = "detail.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        *INTERRUPTION_BINDINGS,
        Binding("escape", "app.pop_screen", "Back"),
        Binding("j", "scroll('down')", "Down", show=False),
        Binding("k", "scroll('up')", "Up", show=False),
    ]

    def __init__(self, interruption_id: int) -> None:
        super().__init__()
        self.interruption_id = interruption_id
        self.detail: InterruptionDetail | None = None

    def compose(self) -> ComposeResult:
        """Status bar, summary, transcript, attempts."""
        yield StatusBar()
        yield Static("Loading…", id="summary")
        with Vertical(id="transcript-pane"):
            yield Label("Conversation", classes="pane-title")
            with VerticalScroll(id="transcript-scroll"):
                yield Static(id="transcript")
        with Vertical(id="attempts-pane"):
            yield Label("Attempts (ledger)", classes="pane-title")
            yield DataTable(id="attempts", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        """Fetch; refetch whenever an action on this interruption finishes."""
        super().on_mount()
        table = self.query_one("#attempts", DataTable)
        for key in ("tentativaNumero", "resultado", "timestamp", "ferramenta", "chaveIdempotencia"):
            table.add_column(key, key=key)
        self.console.item_changed.subscribe(self, self._item_changed)
        self.query_one("#transcript-scroll").focus()
        self.load()

    def _item_changed(self, key: str) -> None:
        if key in ("*", f"int:{self.interruption_id}"):
            self.load()

    def action_scroll(self, direction: str) -> None:
        """Scroll the transcript."""
        getattr(self.query_one("#transcript-scroll", VerticalScroll), f"scroll_{direction}")()

    def selected_interruption(self) -> Interruption | None:
        """The interruption on screen, once loaded."""
        return self.detail

    @work(exclusive=True, group="load", exit_on_error=False)
    async def load(self) -> None:
        """Screen-owned: popping the screen cancels a fetch nobody will see."""
        try:
            detail = await self.console.client.interruption(self.interruption_id)
        except ApiError as exc:
            if isinstance(exc, ContractError):
                self.console.report_contract_error(exc.route, exc.field, exc.detail)
            self.query_one("#summary", Static).update(Text(f"Could not load: {exc.message}", "red"))
            return
        self.detail = detail
        self._display(detail)

    def _display(self, d: InterruptionDetail) -> None:
        if d.status == "open":
            hint = ("press t to take over", "bold red")
        elif d.status == "claimed" and d.claimed_by == self.console.operator:
            hint = ("yours: e execute · d deny (both ask for a reply)", "bold green")
        elif d.status == "claimed":
            hint = (f"claimed by {d.claimed_by}", "yellow")
        else:
            hint = (f"resolved: {d.resolution or ''} — {d.reply or ''}", "dim")
        args = ", ".join(f"{k}={v}" for k, v in d.argumentos.items())
        self.query_one("#summary", Static).update(
            Text.assemble(
                (f"#{d.id} ", "bold"),
                (d.motivo, "bold red"),
                f" · conversa {d.conversation} · {d.entity_text()}\n",
                (d.ferramenta, "bold"),
                f"({args}) · {len(d.attempts)} attempts · since {d.since}\n",
                hint,
            )
        )
        transcript = Text()
        for line in d.transcript:
            transcript.append(f"{line.ts[11:19] if 'T' in line.ts else line.ts} ", "dim")
            transcript.append(f"{line.role:>8} ", ROLE_STYLE.get(line.role, "bold"))
            transcript.append(f"{line.text}\n")
        self.query_one("#transcript", Static).update(transcript or Text("(empty)", "dim"))
        table = self.query_one("#attempts", DataTable)
        table.clear()
        for a in d.attempts:
            table.add_row(
                str(a.tentativaNumero),
                Text(a.resultado, style=resultado_style(a.resultado)),
                a.timestamp[:19],
                a.ferramenta,
                a.chaveIdempotencia or "",
            )
