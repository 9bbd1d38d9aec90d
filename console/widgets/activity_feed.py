"""A bounded, lazily rendered activity log that follows the tail unless scrolled up; a line
longer than the pane wraps under its text, so every word of it stays readable."""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from collections.abc import Sequence
from itertools import accumulate, islice
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.binding import BindingType
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from console.feed import FeedLine, kind_style, short_ts
from console.inert import inert

INDENT = 9
"""A wrapped line's rest starts under its text, past the ``HH:MM:SS`` stamp."""


class ActivityFeed(ScrollView, can_focus=True):
    """Newest line at the bottom; memory bounded by ``max_lines``.

    Only visible rows are rendered (line API), so 100k events cost no more to display than
    the last screenful. A line takes as many rows as its text needs at the pane's width.
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
        self._rows: deque[int] = deque(maxlen=max_lines)
        """How many rows each line takes at :attr:`_wrap_width`."""
        self._starts: list[int] | None = None
        """The first row of each line (rebuilt on demand after a change)."""
        self._wrap_width = 0
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
        dropped_lines = max(0, len(self._lines) + len(lines) - self.max_lines)
        dropped = sum(islice(self._rows, min(dropped_lines, len(self._rows))))
        kept = lines[-self.max_lines :]
        self._lines.extend(kept)
        self._rows.extend(self._rows_of(line) for line in kept)
        self._starts = None
        self.total_appended += len(lines)
        self.virtual_size = Size(self.size.width, self._row_count())
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
        self._rows.clear()
        self._starts = None
        self.virtual_size = Size(self.size.width, 0)
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        """A new width wraps every line anew."""
        if self._text_width() != self._wrap_width:
            self._rows = deque((self._rows_of(x) for x in self._lines), maxlen=self.max_lines)
            self._starts = None
            self.virtual_size = Size(self.size.width, self._row_count())

    def render_line(self, y: int) -> Strip:
        """Render one visible row: a line's first row, or the rest of it under its text."""
        row = self.scroll_offset.y + y
        width = self._text_width()
        style = self.rich_style
        starts = self._line_starts()
        index = bisect_right(starts, row) - 1
        if index < 0 or index >= len(self._lines):
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
        part = row - starts[index]
        if part == 0:
            return strip.crop_extend(0, width, style)
        step = max(1, width - INDENT)
        start = width + (part - 1) * step
        rest = strip.crop(start, start + step)
        return Strip.join([Strip.blank(INDENT, style), rest]).crop_extend(0, width, style)

    def _text_width(self) -> int:
        # Without the scrollbar's column (a long feed always has one): a character under it
        # would be lost at each wrap.
        return max(INDENT + 1, (self.size.width or 80) - 1)

    def _rows_of(self, line: FeedLine) -> int:
        self._wrap_width = width = self._text_width()
        length = len(short_ts(line.ts)) + 1 + cell_len(inert(line.text, multiline=False))
        if length <= width:
            return 1
        return 1 + -(-(length - width) // max(1, width - INDENT))

    def _row_count(self) -> int:
        starts = self._line_starts()
        return starts[-1] + self._rows[-1] if self._rows else 0

    def _line_starts(self) -> list[int]:
        if self._starts is None:
            self._starts = [0, *accumulate(self._rows)][: len(self._rows)]
        return self._starts
