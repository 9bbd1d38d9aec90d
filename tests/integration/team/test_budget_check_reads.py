"""The budget check runs before every turn of every agent, so it reads as little as it can:
the limit, then today's usage only when there is a limit, each once."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from backend.agents.budgets import Budgets
from backend.agents.runtime import TurnContext
from backend.agents.usage import UsageBook
from backend.events import EventLog
from backend.exceptions import BudgetExceededError
from backend.store.db import Database


def counted(db: Database) -> list[bool]:
    """Every transaction opened on ``db`` from now on, as its ``write`` flag."""
    opened: list[bool] = []
    original = db.transaction

    @contextmanager
    def transaction(*, write: bool = True) -> Iterator[Any]:
        opened.append(write)
        with original(write=write) as tx:
            yield tx

    db.transaction = transaction  # type: ignore[method-assign]
    return opened


CTX = TurnContext(None, "s-1", "criativo")


def test_no_limit_is_one_read(any_db: Database) -> None:
    budgets = Budgets(EventLog(any_db), UsageBook(any_db), {})
    opened = counted(any_db)
    budgets.check(CTX)
    assert opened == [False]


def test_a_limit_not_spent_is_two_reads(any_db: Database) -> None:
    usage = UsageBook(any_db)
    usage.record(CTX, "chatty", {"input_tokens": 40, "output_tokens": 9})
    budgets = Budgets(EventLog(any_db), usage, {"criativo": 50})
    opened = counted(any_db)
    budgets.check(CTX)
    assert opened == [False, False]


def test_a_spent_limit_still_refuses(any_db: Database) -> None:
    usage = UsageBook(any_db)
    usage.record(CTX, "chatty", {"input_tokens": 40, "output_tokens": 10})
    budgets = Budgets(EventLog(any_db), usage, {"criativo": 50})
    with pytest.raises(BudgetExceededError):
        budgets.check(CTX)
    assert budgets.budget("criativo")["used_today"] == 50
