"""An Inbox item's deadline as the console shows it (``console.sla``), with plain asserts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from rich.text import Text

from console.models_inbox import InboxItem
from console.sla import BreachWatch, breached_first, due_text, paint_row, sla_state

T = datetime(2025, 11, 29, 12, 0, 0, tzinfo=UTC)


def _item(ident: str, sla_s: float | None = 120, **fields: object) -> InboxItem:
    kind, target = ident.split(":", 1)
    due = (T + timedelta(seconds=sla_s)).isoformat().replace("+00:00", "Z") if sla_s else None
    data: dict[str, object] = {
        "id": ident,
        "kind": kind,
        "target_id": target,
        "since": T.isoformat().replace("+00:00", "Z"),
        "due_at": due,
        **fields,
    }
    return InboxItem.model_validate(data)


def test_time_left_then_overdue_by_the_console_clock() -> None:
    item = _item("interruption:7", 240, sla_state="ok")
    assert due_text(item, T) == "4m left"
    assert sla_state(item, T) == "ok"
    assert sla_state(item, T + timedelta(seconds=179)) == "ok"
    assert sla_state(item, T + timedelta(seconds=180)) == "warning"  # 75% of 4m
    assert due_text(item, T + timedelta(seconds=252)) == "12s over"
    # The server said ok when it answered; the clock moved on without another fetch.
    assert sla_state(item, T + timedelta(seconds=240)) == "breached"


def test_an_older_server_sends_no_deadline() -> None:
    old = InboxItem.model_validate({"id": "pr:1", "kind": "pr", "target_id": "1"})
    assert old.due_at is None
    assert old.sla_state is None
    assert due_text(old, T) == "—"
    assert sla_state(old, T + timedelta(days=9)) is None
    unreadable = _item("pr:2", None, due_at="soon", sla_state="breached")
    assert sla_state(unreadable, T) == "breached"  # the server's word when due_at is unreadable
    assert due_text(unreadable, T) == "overdue"


def test_breached_first_keeps_the_server_order_within() -> None:
    items = [_item("pr:1", 3600), _item("interruption:2", 60), _item("pr:3", 30)]
    order = [i.id for i in breached_first(items, T + timedelta(seconds=90))]
    assert order == ["interruption:2", "pr:3", "pr:1"]


def test_each_breach_is_news_once_and_the_start_is_not_news() -> None:
    watch = BreachWatch()
    early, late = _item("interruption:1", 60), _item("interruption:2", 300)
    assert watch.new([early, late], T + timedelta(seconds=90)) == set()  # already late at start
    assert watch.new([early, late], T + timedelta(seconds=301)) == {"interruption:2"}
    assert watch.new([early, late], T + timedelta(seconds=302)) == set()
    assert watch.new([late], T + timedelta(seconds=303)) == set()  # gone and back: not again
    assert watch.new([late, early], T + timedelta(seconds=304)) == set()
    arriving = _item("uncertain:k", 10)
    assert watch.new([late, arriving], T + timedelta(seconds=305)) == {"uncertain:k"}


def test_a_breached_row_is_painted_and_an_ok_row_is_not() -> None:
    cells = (Text("PR", style="bold"), "5m")
    assert paint_row(cells, "ok") is cells
    painted = paint_row(cells, "breached")
    assert all(isinstance(c, Text) and c.style for c in painted)
    assert [str(c) for c in painted] == ["PR", "5m"]


def test_the_time_left_column_still_fits_80_columns() -> None:
    from console.layout import CELL_PADDING, MIN_WIDTH
    from console.screens.approvals import COLUMNS as APPROVALS
    from console.screens.inbox import COLUMNS as INBOX

    for columns in (INBOX, APPROVALS):
        assert "due" in [c.key for c in columns]
        assert sum(c.min_width + CELL_PADDING for c in columns) < MIN_WIDTH


def test_a_deadline_months_away_fits_the_column() -> None:
    from datetime import UTC, datetime, timedelta

    from console.models_inbox import InboxItem
    from console.sla import due_text

    now = datetime(2026, 12, 5, tzinfo=UTC)
    far = (now + timedelta(days=36500)).isoformat().replace("+00:00", "Z")
    item = InboxItem.model_validate(
        {
            "id": "pr:a",
            "kind": "pr",
            "target_id": "a",
            "project_id": None,
            "project_name": None,
            "title": "t",
            "detail": "d",
            "since": now.isoformat(),
            "age_s": 0,
            "state": "awaiting_human",
            "due_at": far,
            "sla_state": "ok",
            "actions": [],
        }
    )
    assert due_text(item, now) == ">99d"
