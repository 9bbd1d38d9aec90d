"""The dialogs in front of every operator action: confirm, one line of text, a small form.

Confirm with ``y`` (never the trigger key), focus starts on *No*, ``n`` and ``esc`` cancel;
a prompt that needs text cannot be submitted empty, and a form checks each line before it
can be sent. A form only collects answers: the action is still confirmed with ``y``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
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


@dataclass(frozen=True)
class FormField:
    """One line of a :class:`FormScreen`.

    Attributes:
        name: Key of the answer in the dismissed mapping.
        label: What the operator is asked.
        placeholder: Grey hint inside the empty line.
        required: A blank answer is refused.
        check: Returns why a non-blank answer is refused, or None when it is fine.
        value: Pre-filled text.
    """

    name: str
    label: str
    placeholder: str = ""
    required: bool = True
    check: Callable[[str], str | None] | None = None
    value: str = ""


class FormScreen(ModalScreen[dict[str, str] | None]):
    """Ask for several answers; dismisses with {name: stripped text}, or None on ``esc``.

    ``enter`` moves to the next line, and on the last line sends the form; a line that is
    refused keeps the focus and says why.
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]
    DEFAULT_CSS = """
    FormScreen { align: center middle; }
    FormScreen > Vertical {
        width: 76; max-width: 100%; height: auto; padding: 1 2;
        border: thick $warning; background: $surface;
    }
    FormScreen .title { text-style: bold; margin-bottom: 1; }
    FormScreen .field-label { margin-top: 1; }
    FormScreen #error { color: $error; height: auto; }
    FormScreen Horizontal { height: auto; margin-top: 1; align-horizontal: right; }
    FormScreen Button { margin-left: 2; }
    """

    def __init__(
        self, title: str, body: str, fields: list[FormField], *, submit_label: str = "Next"
    ) -> None:
        super().__init__()
        self._title = title
        self._body = body
        self._fields = fields
        self._submit_label = submit_label

    def compose(self) -> ComposeResult:
        """Title, body, one labelled input per field, and Cancel / Next."""
        with Vertical():
            yield Label(inert_text(self._title), classes="title")
            yield Static(inert(self._body))
            for f in self._fields:
                yield Label(inert_text(f.label), classes="field-label")
                yield Input(
                    value=inert(f.value, multiline=False),
                    placeholder=inert(f.placeholder, multiline=False),
                    id=f"f-{f.name}",
                )
            yield Static("", id="error")
            with Horizontal():
                yield Button("Cancel (esc)", id="cancel")
                yield Button(f"{self._submit_label} (enter)", id="submit", variant="warning")

    def on_mount(self) -> None:
        """Typing starts in the first line."""
        self.query_one(f"#f-{self._fields[0].name}", Input).focus()

    @on(Input.Submitted)
    def _line_done(self, event: Input.Submitted) -> None:
        names = [f.name for f in self._fields]
        name = (event.input.id or "").removeprefix("f-")
        problem = self._problem(self._field(name), event.value)
        if problem:
            self.query_one("#error", Static).update(problem)
            return
        self.query_one("#error", Static).update("")
        at = names.index(name)
        if at + 1 < len(names):
            self.query_one(f"#f-{names[at + 1]}", Input).focus()
        else:
            self._submit()

    @on(Button.Pressed, "#submit")
    def _submit(self) -> None:
        answers: dict[str, str] = {}
        for f in self._fields:
            box = self.query_one(f"#f-{f.name}", Input)
            problem = self._problem(f, box.value)
            if problem:
                self.query_one("#error", Static).update(problem)
                box.focus()
                return
            answers[f.name] = box.value.strip()
        self.dismiss(answers)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        """Cancelled; nothing is sent."""
        self.dismiss(None)

    def _field(self, name: str) -> FormField:
        return next(f for f in self._fields if f.name == name)

    @staticmethod
    def _problem(f: FormField, text: str) -> str | None:
        if not text.strip():
            return f"{f.label.rstrip(':')}: required — type it, or esc." if f.required else None
        return f.check(text) if f.check else None
