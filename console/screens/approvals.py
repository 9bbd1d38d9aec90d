"""Approvals (key ``2``): infra PRs in review, teto interruptions and uncertain refund
outcomes, whatever waits on a human first."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import DataTable, Input, Label

from console.inert import inert_text
from console.models import InfraPr, Interruption, UncertainItem
from console.screens._base import OPERATOR_BINDINGS, UNCERTAIN_BINDINGS, OperatorScreen
from console.screens._tables import reconcile
from console.state import matches, ordered_interruptions, ordered_prs, since_text
from console.widgets.footer import KeysFooter
from console.widgets.status_bar import StatusBar

PR_COLUMNS = (
    ("pr", 8),
    ("title", 28),
    ("branch", 20),
    ("gate", 18),
    ("corr", 4),
    ("findings", 8),
    ("blocked", 24),
)
INT_COLUMNS = (
    ("#", 4),
    ("conversa", 18),
    ("entidade", 14),
    ("ferramenta", 18),
    ("motivo", 17),
    ("tries", 5),
    ("waiting", 7),
    ("claimed by", 12),
)
UNC_COLUMNS = (
    ("pedido", 8),
    ("valor", 9),
    ("conversa", 18),
    ("chaveIdempotencia", 40),
    ("waiting", 7),
    ("actions", 18),
)
_OTHER_LISTS = ("interruptions", "uncertain")
GATE_STYLE = {
    "awaiting_human": "bold reverse red",
    "blocked": "bold red",
    "changes_requested": "yellow",
    "awaiting_qa": "cyan",
    "awaiting_secops": "cyan",
}


def _age(iso: str, now: datetime, fallback_s: float | None = None) -> str:
    try:
        then = datetime.fromisoformat(iso)
    except ValueError:
        return "?" if fallback_s is None else since_text(fallback_s)
    return since_text((now - then).total_seconds())


class ApprovalsScreen(OperatorScreen):
    """What waits on people: approve/reject PRs, take over and resolve interruptions,
    reconcile or settle uncertain outcomes."""

    TITLE = "Approvals"
    CSS_PATH = "approvals.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        *OPERATOR_BINDINGS,
        *UNCERTAIN_BINDINGS,
        Binding("j", "cursor('down')", "Down", show=False),
        Binding("k", "cursor('up')", "Up", show=False),
        Binding("enter", "open", "Open", show=False),
        Binding("slash", "filter", "Filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    def compose(self) -> ComposeResult:
        """Status bar, the lists, footer (the filter line comes with ``/``)."""
        yield StatusBar()
        with Vertical(id="prs-pane"):
            yield Label("Infra PRs in review", classes="pane-title")
            yield DataTable(id="prs", cursor_type="row")
        with Vertical(id="ints-pane"):
            yield Label("Interruptions (teto de voltas)", classes="pane-title")
            yield DataTable(id="interruptions", cursor_type="row")
        with Vertical(id="unc-pane"):
            yield Label(
                "Uncertain outcomes (resultado_incerto: did money move?)", classes="pane-title"
            )
            yield DataTable(id="uncertain", cursor_type="row")
        yield KeysFooter()

    def on_mount(self) -> None:
        """Columns, subscriptions, and whatever the App already knows."""
        if not self.query("#prs"):
            return  # built in the background while the App quits: nothing was composed
        super().on_mount()
        self._filter = ""
        self._shown_prs: dict[str, tuple[object, ...]] = {}
        self._shown_ints: dict[str, tuple[object, ...]] = {}
        self._shown_unc: dict[str, tuple[object, ...]] = {}
        tables = (
            ("#prs", PR_COLUMNS),
            ("#interruptions", INT_COLUMNS),
            ("#uncertain", UNC_COLUMNS),
        )
        for table_id, columns in tables:
            table = self.query_one(table_id, DataTable)
            for key, width in columns:
                table.add_column(key, key=key, width=width)
        self.console.approvals_changed.subscribe(self, self._render_lists)
        self._render_lists(None)
        self.query_one("#prs", DataTable).focus()

    def on_screen_resume(self) -> None:
        """Catch up after another mode or a detail screen."""
        if not self.query("#prs"):
            return  # resumed while the App quits, never composed (see on_mount)
        super().on_screen_resume()
        self._render_lists(None)

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._filter = event.value
        self._render_lists(None)

    @on(Input.Submitted, "#filter")
    def _filter_done(self) -> None:
        self.query_one("#prs", DataTable).focus()

    @on(DataTable.RowSelected)
    def _row_selected(self) -> None:
        self.action_open()

    def action_cursor(self, direction: str) -> None:
        """``j``/``k`` in whichever list has focus."""
        if isinstance(self.focused, DataTable):
            getattr(self.focused, f"action_cursor_{direction}")()

    def action_open(self) -> None:
        """``enter``: open the selected item's detail screen."""
        from console.screens.interruption_detail import InterruptionDetailScreen
        from console.screens.pr_detail import PrDetailScreen

        if isinstance(self.focused, DataTable) and self.focused.id == "interruptions":
            if item := self.selected_interruption():
                self.app.push_screen(InterruptionDetailScreen(item.id))
        elif pr := self.selected_pr():
            self.app.push_screen(PrDetailScreen(pr.pr_action_id))

    async def action_filter(self) -> None:
        """``/``: filter both lists."""
        box = await self.filter_box("filter PRs and interruptions (esc clears)")
        box.remove_class("hidden")
        box.focus()

    def action_clear_filter(self) -> None:
        """``esc``: clear and hide the filter."""
        self.hide_filter()
        self.query_one("#prs", DataTable).focus()

    def selected_pr(self) -> InfraPr | None:
        """The highlighted PR (when the PR list has focus, or no other list has)."""
        if isinstance(self.focused, DataTable) and self.focused.id in (
            "interruptions",
            "uncertain",
        ):
            return None
        key = self._cursor_key("#prs")
        return next((p for p in self.console.approvals.infra_prs if p.pr_action_id == key), None)

    def selected_interruption(self) -> Interruption | None:
        """The highlighted interruption (the list must have focus)."""
        if not (isinstance(self.focused, DataTable) and self.focused.id == "interruptions"):
            return None
        key = self._cursor_key("#interruptions")
        return next((i for i in self.console.approvals.interruptions if str(i.id) == key), None)

    def selected_uncertain(self) -> UncertainItem | None:
        """The highlighted uncertain outcome (the list must have focus)."""
        if not (isinstance(self.focused, DataTable) and self.focused.id == "uncertain"):
            return None
        key = self._cursor_key("#uncertain")
        return next((u for u in self.console.approvals.uncertain if u.id == key), None)

    def _cursor_key(self, table_id: str) -> str | None:
        table = self.query_one(table_id, DataTable)
        if table.row_count == 0:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def _render_lists(self, _: object) -> None:
        approvals, now, q = self.console.approvals, self.console.now(), self._filter
        pr_rows = [
            (p.pr_action_id, self._pr_cells(p))
            for p in ordered_prs(approvals.infra_prs)
            if matches(q, p.pr_id, p.title, p.branch, p.gate_status, p.blocked_reason)
        ]
        int_rows = [
            (str(i.id), self._int_cells(i, now))
            for i in ordered_interruptions(approvals.interruptions)
            if matches(q, i.id, i.conversation, i.entidade_id, i.ferramenta, i.motivo, i.claimed_by)
        ]
        reconcile(
            self.query_one("#prs", DataTable), self._shown_prs, pr_rows, [c for c, _ in PR_COLUMNS]
        )
        reconcile(
            self.query_one("#interruptions", DataTable),
            self._shown_ints,
            int_rows,
            [c for c, _ in INT_COLUMNS],
        )
        unc_rows = [
            (u.id, self._unc_cells(u, now))
            for u in sorted(approvals.uncertain, key=lambda u: (u.since, u.id))
            if matches(q, u.pedidoId, u.conversaId, u.chaveIdempotencia, u.valor)
        ]
        reconcile(
            self.query_one("#uncertain", DataTable),
            self._shown_unc,
            unc_rows,
            [c for c, _ in UNC_COLUMNS],
        )

    @staticmethod
    def _pr_cells(p: InfraPr) -> tuple[object, ...]:
        return (
            inert_text(p.pr_id or p.pr_action_id[:8]),
            inert_text(p.title),
            inert_text(p.branch),
            inert_text(p.gate_status, GATE_STYLE.get(p.gate_status, "")),
            str(p.gate_correction_count),
            str(p.findings_count),
            inert_text(p.blocked_reason, "red"),
        )

    @staticmethod
    def _int_cells(i: Interruption, now: datetime) -> tuple[object, ...]:
        claimed = i.claimed_by or ""
        return (
            str(i.id),
            inert_text(i.conversation),
            inert_text(i.entidade_id),
            inert_text(i.ferramenta),
            inert_text(i.motivo),
            str(i.attempt_count),
            inert_text(_age(i.since, now)),
            inert_text(claimed or "— open —", "dim" if claimed else "bold red"),
        )

    @staticmethod
    def _unc_cells(u: UncertainItem, now: datetime) -> tuple[object, ...]:
        keys = {"reconcile": "c reconcile", "settle": "s settle"}
        return (
            inert_text(u.pedidoId),
            inert_text(u.valor),
            inert_text(u.conversaId),
            inert_text(u.chaveIdempotencia),
            inert_text(_age(u.since, now, u.age_s), "bold yellow"),
            inert_text(" · ".join(keys.get(a, a) for a in u.actions)),
        )
