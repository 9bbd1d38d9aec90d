"""Confirmation and text-prompt dialogs: the safety net in front of every action.

STYLE rule 9: confirm with ``y`` (never the trigger key), focus starts on *No*, ``n`` and
``esc`` cancel; a prompt that needs text cannot be submitted empty.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from console.inert import inert, inert_text


class ConfirmScreen(ModalScreen[bool]):
    """Ask yes/no; dismisses with True only on ``y`` or the Yes button."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "confirm", "Yes"),
        Binding("n", "cancel", "No"),
        Binding("escape", "cancel", "Cancel"),
    ]
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 64; max-width: 100%; height: auto; padding: 1 2;
        border: thick $warning; background: $surface;
    }
    ConfirmScreen .title { text-style: bold; margin-bottom: 1; }
    ConfirmScreen Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    ConfirmScreen Button { margin-left: 2; }
    """

    def __init__(self, title: str, body: str) -> None:
        super().__init__()
        self._title = title
        self._body = body

    def compose(self) -> ComposeResult:
        """Title, body, and the two buttons with No first."""
        with Vertical():
            yield Label(inert_text(self._title), classes="title")
            yield Static(inert(self._body))
            yield Static("[dim]y[/] confirm · [dim]n / esc[/] cancel")
            with Horizontal():
                yield Button("No", id="no", variant="primary")
                yield Button("Yes (y)", id="yes", variant="warning")

    def on_mount(self) -> None:
        """Default to No, so a stray enter cancels."""
        self.query_one("#no", Button).focus()

    @on(Button.Pressed, "#yes")
    def action_confirm(self) -> None:
        """Confirmed."""
        self.dismiss(True)

    @on(Button.Pressed, "#no")
    def action_cancel(self) -> None:
        """Cancelled; nothing is sent."""
        self.dismiss(False)


class PromptScreen(ModalScreen[str | None]):
    """Ask for a line of text (a reject reason, a reply to the customer).

    Dismisses with the stripped text, or None on ``esc``. With ``required`` the submit
    button stays disabled while the text is blank, and enter on a blank line only warns.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    PromptScreen { align: center middle; }
    PromptScreen > Vertical {
        width: 72; max-width: 100%; height: auto; padding: 1 2;
        border: thick $warning; background: $surface;
    }
    PromptScreen .title { text-style: bold; margin-bottom: 1; }
    PromptScreen #error { color: $error; height: auto; }
    PromptScreen Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    PromptScreen Button { margin-left: 2; }
    """

    def __init__(
        self,
        title: str,
        body: str,
        *,
        placeholder: str = "",
        submit_label: str = "Submit",
        required: bool = True,
    ) -> None:
        super().__init__()
        self._title = title
        self._body = body
        self._placeholder = placeholder
        self._submit_label = submit_label
        self._required = required

    def compose(self) -> ComposeResult:
        """Title, body, the input, and Cancel / Submit."""
        with Vertical():
            yield Label(inert_text(self._title), classes="title")
            yield Static(inert(self._body))
            yield Input(placeholder=self._placeholder, id="text")
            yield Static("", id="error")
            with Horizontal():
                yield Button("Cancel (esc)", id="cancel")
                yield Button(
                    f"{self._submit_label} (enter)",
                    id="submit",
                    variant="warning",
                    disabled=self._required,
                )

    def on_mount(self) -> None:
        """Typing starts at once."""
        self.query_one(Input).focus()

    @on(Input.Changed)
    def _text_changed(self, event: Input.Changed) -> None:
        blank = not event.value.strip()
        self.query_one("#submit", Button).disabled = self._required and blank
        if not blank:
            self.query_one("#error", Static).update("")

    @on(Input.Submitted)
    @on(Button.Pressed, "#submit")
    def _submit(self) -> None:
        text = self.query_one(Input).value.strip()
        if self._required and not text:
            self.query_one("#error", Static).update("A text is required — type it, or esc.")
            return
        self.dismiss(text)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Cancelled; nothing is sent."""
        self.dismiss(None)
