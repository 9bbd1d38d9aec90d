"""Keyed DataTable reconciliation shared by the list screens."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from rich.text import Text
from textual.widgets import DataTable

from console.layout import Column, fit_widths


def reconcile(
    table: DataTable[object],
    shown: dict[str, tuple[Hashable, ...]],
    rows: Sequence[tuple[str, tuple[object, ...]]],
    column_keys: Sequence[str],
) -> None:
    """Make ``table`` show ``rows`` (key, cells) in order, touching only what changed.

    ``shown`` is the caller's memo of the cells last written per key; it is updated in
    place. Cells are compared by ``str()`` so Rich ``Text`` values diff by content, and a
    ``Text`` by its style too (a row that turns breached changes colour, not words). The
    cursor stays on the same item (by key) when rows move.
    """
    cursor_key = _cursor_key(table)
    wanted = dict(rows)
    for gone in [k for k in shown if k not in wanted]:
        table.remove_row(gone)
        del shown[gone]
    for key, cells in rows:
        memo = tuple(_signature(c) for c in cells)
        old = shown.get(key)
        if old is None:
            table.add_row(*cells, key=key)
        elif old != memo:
            for column, value, before, after in zip(column_keys, cells, old, memo, strict=True):
                if before != after:
                    table.update_cell(key, column, value)
        shown[key] = memo
    current = [row_key.value for row_key in table.rows]
    current.sort(key=lambda k: table.get_row_index(k or ""))
    if current != [key for key, _ in rows]:
        # Rank changed (e.g. a PR reached awaiting_human): rebuild once in the new order.
        # Rare by construction; ordinary updates above never clear the table.
        table.clear()
        for key, cells in rows:
            table.add_row(*cells, key=key)
    if cursor_key is not None and cursor_key in wanted:
        table.move_cursor(row=table.get_row_index(cursor_key), animate=False)


def _signature(cell: object) -> str:
    if isinstance(cell, Text):
        return f"{cell.plain}\x00{cell.style}"
    return str(cell)


def _cursor_key(table: DataTable[object]) -> str | None:
    if table.row_count == 0 or not table.is_valid_row_index(table.cursor_row):
        return None
    return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value


def add_columns(table: DataTable[object], columns: Sequence[Column]) -> None:
    """Add ``columns`` at their minimum widths (:func:`fit_columns` widens them)."""
    for c in columns:
        table.add_column(c.key, key=c.key, width=c.min_width)


def fit_columns(table: DataTable[object], columns: Sequence[Column], total: int) -> None:
    """Give ``table``'s columns the widths :func:`fit_widths` computes for ``total`` cells
    (call on resize): titles and roles use the room a wide terminal has."""
    widths = fit_widths(columns, total)
    changed = False
    for key, column in table.columns.items():
        wanted = widths.get(key.value or "")
        if wanted is not None and column.width != wanted:
            column.width, changed = wanted, True
    if changed:
        table._clear_caches()
        table._require_update_dimensions = True
        table.refresh()
