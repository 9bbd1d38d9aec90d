"""A bounded, lazily rendered activity log that follows the tail unless scrolled up."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.binding import BindingType
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from console.feed import FeedLine, kind_style, short_ts
from console.inert import inert


class ActivityFeed(ScrollView, can_focus=True):
    """Newest line at the bottom; memory bounded by ``max_lines``.

    Only visible lines are rendered (line API), so appending is O(batch) whatever the
    backlog, and 100k events cost no more to display than the last screenful.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        ("G", "scroll_end", "Follow tail"),
        ("g", "scroll_home", "Top"),
    ]

    DEFAULT_CSS = """
    ActivityFeed {
        height: 1fr;
        scrollbar-size-vertical: 1;
    }
    """

    def __init__(
        self,
        max_lines: int = 5_000,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.max_lines = max_lines
        self._lines: deque[FeedLine] = deque(maxlen=max_lines)
        self.total_appended = 0
        """Every line ever appended, including those the bound dropped."""
        self._follow = True

    @property
    def line_count(self) -> int:
        """Lines currently held."""
        return len(self._lines)

    @property
    def following(self) -> bool:
        """True while the view follows the tail (the operator has not scrolled up)."""
        return self._follow

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Scrolling up releases the tail; reaching the bottom again re-attaches it."""
        super().watch_scroll_y(old_value, new_value)
        if new_value < old_value:
            self._follow = round(new_value) >= self.max_scroll_y
        elif round(new_value) >= self.max_scroll_y:
            self._follow = True

    def last_lines(self, n: int) -> list[FeedLine]:
        """The newest ``n`` lines (tests and the command palette)."""
        return list(self._lines)[-n:]

    def append_lines(self, lines: Sequence[FeedLine]) -> None:
        """Append a batch; keep following the tail only if the operator was at it."""
        if not lines:
            return
        follow = self.following
        dropped = max(0, len(self._lines) + len(lines) - self.max_lines)
        self._lines.extend(lines[-self.max_lines :])
        self.total_appended += len(lines)
        self.virtual_size = Size(self.size.width, len(self._lines))
        if follow:
            # Deferred: the new max_scroll_y is known only after the next layout.
            self.scroll_end(animate=False, x_axis=False)
        elif dropped:
            # Lines vanished above the viewport: shift up so the text read stays put.
            self.scroll_to(y=max(0, self.scroll_offset.y - dropped), animate=False, immediate=True)
        self.refresh()

    def clear(self) -> None:
        """Drop every line."""
        self._lines.clear()
        self.virtual_size = Size(self.size.width, 0)
        self.refresh()

    def render_line(self, y: int) -> Strip:
        """Render one visible row from the deque."""
        index = self.scroll_offset.y + y
        width = self.size.width
        style = self.rich_style
        if index >= len(self._lines):
            return Strip.blank(width, style)
        line = self._lines[index]
        # The line's own words say what happened; the event type only colours it, so a
        # narrow pane spends its width on the text an operator reads.
        text = Text.assemble(
            (short_ts(line.ts), "dim"),
            " ",
            (inert(line.text, multiline=False), kind_style(line.kind)),
            no_wrap=True,
            end="",
        )
        text.stylize(style)
        strip = Strip(text.render(self.app.console), text.cell_len)
        return strip.crop_extend(0, width, style)
