"""The console's top line: backend, connection state, what waits on a human."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

from console.inert import inert


class StatusBar(Widget):
    """One-line header; everything it shows is a reactive the App sets."""

    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        background: $panel;
        color: $foreground;
    }
    """

    url: reactive[str] = reactive("")
    """Backend base URL."""
    connection: reactive[str] = reactive("connecting")
    """``connecting`` | ``live`` | ``reconnecting`` | ``stale``."""
    stale_seconds: reactive[int] = reactive(0)
    """Seconds since the stream last said anything (shown when stale)."""
    prs_waiting: reactive[int] = reactive(0)
    """Infra PRs awaiting a human."""
    interruptions_waiting: reactive[int] = reactive(0)
    """Interruptions nobody claimed yet."""
    inbox_waiting: reactive[int] = reactive(0)
    """Items on the Inbox (every kind)."""
    breached: reactive[int] = reactive(0)
    """Inbox items past their deadline (shown only when there are any)."""
    paused: reactive[int | None] = reactive(None)
    """None when live; else how many events arrived while paused."""
    readonly: reactive[bool] = reactive(False)
    """Read-only console: actions refused."""
    operator: reactive[str] = reactive("")
    """Who the actions are sent as."""
    me: reactive[str] = reactive("")
    """The operator the token names (``GET /api/me``), once known."""
    problem: reactive[str] = reactive("")
    """A response the console could not read (route and field), until it reads well again."""

    def render(self) -> Text:
        """Compose the line; the URL is dropped first when the terminal is narrow."""
        state = {
            "live": ("● live", "bold green"),
            "connecting": ("◌ connecting", "yellow"),
            "reconnecting": ("◌ reconnecting", "bold yellow"),
            "stale": (f"◌ stale {self.stale_seconds}s", "bold red"),
            "token refused": ("✖ token refused", "bold reverse red"),
        }.get(self.connection, (self.connection, "yellow"))
        waiting = self.prs_waiting + self.interruptions_waiting
        parts: list[tuple[str, str] | str] = [(" Cadência ", "bold reverse"), " ", state, "  "]
        parts.append(
            (
                (
                    f"⚑ {self.prs_waiting} PR{'' if self.prs_waiting == 1 else 's'} · "
                    f"{self.interruptions_waiting} interruption"
                    f"{'' if self.interruptions_waiting == 1 else 's'} awaiting you"
                ),
                "bold red" if waiting else "dim",
            )
        )
        parts += ["  ", (f"Inbox {self.inbox_waiting}", "bold" if self.inbox_waiting else "dim")]
        if self.breached:
            parts += [" ", (f"{self.breached} breached", "bold reverse red")]
        if self.paused is not None:
            parts += ["  ", (f"⏸ PAUSED (+{self.paused})", "bold reverse yellow")]
        if self.readonly:
            parts += ["  ", ("READ-ONLY", "bold reverse magenta")]
        if self.problem:
            parts += [
                "  ",
                (f"⚠ unreadable: {inert(self.problem, multiline=False)}", "bold reverse red"),
            ]
        who = self.me or self.operator
        if self.me and self.operator and self.me != self.operator:
            who = f"{self.me} as {self.operator}"
        tail = f"  {inert(who, multiline=False)}@{self.url}"
        text = Text.assemble(*parts)
        if text.cell_len + len(tail) <= self.size.width:
            text.append(tail, "dim")
        return text
