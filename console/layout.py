"""Pure layout arithmetic: column widths that follow the terminal, and the smallest
terminal the console draws in (below it the screens say so instead of dropping columns)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MIN_WIDTH, MIN_HEIGHT = 80, 24
"""The smallest terminal every screen is laid out for."""
CELL_PADDING = 2
"""A DataTable cell's padding (one column each side), outside its width."""


@dataclass(frozen=True)
class Column:
    """A table column: its key, the width it never goes under, and its share of the rest
    (0 = fixed at ``min_width``)."""

    key: str
    min_width: int
    grow: int = 0


def too_small(width: int, height: int) -> bool:
    """True below 80×24."""
    return width < MIN_WIDTH or height < MIN_HEIGHT


def fit_widths(columns: Sequence[Column], total: int) -> dict[str, int]:
    """Each column's width for a table ``total`` cells wide.

    Every column gets its minimum; what is left goes to the growing columns by their
    share, the remainder of the division to the first of them, so the widths (plus
    padding) fill ``total`` exactly when there is room and never go under the minimum.
    """
    widths = {c.key: c.min_width for c in columns}
    spare = total - sum(widths.values()) - CELL_PADDING * len(columns)
    growing = [c for c in columns if c.grow > 0]
    if spare <= 0 or not growing:
        return widths
    shares = sum(c.grow for c in growing)
    given = 0
    for c in growing:
        extra = spare * c.grow // shares
        widths[c.key] += extra
        given += extra
    widths[growing[0].key] += spare - given
    return widths
