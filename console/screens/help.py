"""``?``: every binding of the screen the operator was on, with why some are off."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.table import Table
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

_NAVIGATION = frozenset(
    {"Cursor up", "Cursor down", "Select", "Top", "Bottom", "Page up", "Page down"}
)


def binding_rows(app: App[Any], screen: Screen[Any]) -> list[tuple[str, str, str]]:
    """(keys, description, why it is off) for the screen's and the app's bindings, then
    the focused widget's navigation keys (no page-left, copy...)."""
    own: list[tuple[str, str, str]] = []
    widget: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for active in screen.active_bindings.values():
        binding = active.binding
        if binding.action in seen and not binding.description:
            continue
        seen.add(binding.action)
        note = "" if active.enabled else "off: read-only console"
        keys = binding.key_display or app.get_key_display(binding)
        row = (keys, binding.description or binding.action, note)
        if binding.description == "Copy selected text":
            continue  # Textual's own; nothing an operator needs from this console
        if isinstance(active.node, (App, Screen)):
            own.append(row)
        elif binding.description in _NAVIGATION:
            widget.append(row)
    return own + widget


class HelpScreen(ModalScreen[None]):
    """A table of key → action for the screen below; ``esc``/``?``/``q`` closes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close"),
        Binding("q", "close", "Close"),
    ]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 80; max-width: 100%; height: auto; max-height: 90%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, screen_title: str, rows: list[tuple[str, str, str]]) -> None:
        """``rows`` are (keys, description, note) — note says why a binding is off."""
        super().__init__()
        self._screen_title = screen_title
        self._rows = rows

    def compose(self) -> ComposeResult:
        """The bindings table."""
        table = Table(title=f"Keys — {self._screen_title}", expand=True, box=None)
        table.add_column("key", style="bold cyan", no_wrap=True)
        table.add_column("does")
        table.add_column("", style="dim magenta")
        for keys, description, note in self._rows:
            table.add_row(keys, description, note)
        with VerticalScroll():
            yield Static(table)
            yield Static("[dim]esc to close · ctrl+p or : for the command palette[/]")

    def action_close(self) -> None:
        """Back to the screen."""
        self.dismiss(None)
