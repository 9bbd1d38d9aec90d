"""The delivery worker group-commits the closing of deliveries that finish together."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from backend.channel.base import RetryPolicy
from backend.channel.simulator import ChannelSimulator
from backend.channel.webhook import WebhookChannel
from backend.channel.worker import DeliveryWorker
from backend.exceptions import StorageError
from backend.guard.assembly import Guard, build_guard
from backend.jobs import Jobs
from backend.settings import load_settings

N = 5


@pytest.fixture
def guard(db_url: str, tmp_path: Any) -> Iterator[Guard]:
    built = build_guard(load_settings(data_dir=tmp_path / "data", database_url=db_url))
    yield built
    built.close()


def _wait(condition: Callable[[], bool], what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


@contextmanager
def _worker(guard: Guard, webhook: ChannelSimulator) -> Iterator[DeliveryWorker]:
    """The real worker, its job engine on its own event loop thread, over the webhook."""
    jobs = Jobs(guard.db)
    worker = DeliveryWorker(guard.conversations, WebhookChannel(webhook.url), RetryPolicy(), jobs)
    loop = asyncio.new_event_loop()
    tasks: list[asyncio.Task[Any]] = []

    async def main() -> None:
        def spawn(coro: Any, name: str) -> asyncio.Task[Any]:
            tasks.append(asyncio.create_task(coro, name=name))
            return tasks[-1]

        jobs.start(spawn)
        await asyncio.to_thread(worker.resume)
        await asyncio.gather(*tasks)

    task = loop.create_task(main())

    def run() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            loop.run_until_complete(task)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield worker
    finally:
        loop.call_soon_threadsafe(lambda: [t.cancel() for t in [task, *tasks]])
        thread.join(10)
        loop.close()


def _statuses(guard: Guard, ids: list[int]) -> list[str]:
    return [str((guard.conversations.delivery(i) or {}).get("status")) for i in ids]


def test_deliveries_that_finish_while_a_closing_commits_share_the_next_commit(
    guard: Guard, webhook: ChannelSimulator
) -> None:
    ids = [guard.conversations.say(f"conv-{i}", "agente", f"oi {i}").id for i in range(N)]
    batches: list[list[int]] = []
    release = threading.Event()
    finish = guard.conversations.finish_deliveries

    def held_first(finished: Any) -> None:
        finished = list(finished)
        batches.append([f[0] for f in finished])
        if len(batches) == 1:  # hold the first closing until every message is out
            assert release.wait(20)
        finish(finished)

    guard.conversations.finish_deliveries = held_first  # type: ignore[method-assign]
    with _worker(guard, webhook) as worker:
        # the others are sent and closed meanwhile: they wait, they do not commit
        _wait(
            lambda: len(batches) == 1 and len(batches[0]) + worker.closings_waiting == N,
            "the others closed",
        )
        assert len(webhook.received()) == N
        release.set()
        _wait(lambda: _statuses(guard, ids) == ["delivered"] * N, "all closed")

    assert len(batches) == 2  # five closings, two commits
    assert sorted(batches[0] + batches[1]) == sorted(ids)
    assert sorted(r["messageId"] for r in webhook.received()) == sorted(ids)  # each once


def test_a_failed_closing_commit_leaves_every_delivery_of_it_pending(
    guard: Guard, webhook: ChannelSimulator
) -> None:
    ids = [guard.conversations.say(f"conv-{i}", "agente", f"oi {i}").id for i in range(N)]
    calls: list[int] = []

    def broken(finished: Any) -> None:
        calls.append(len(list(finished)))
        raise StorageError("disk full")

    guard.conversations.finish_deliveries = broken  # type: ignore[method-assign]
    with _worker(guard, webhook):
        _wait(lambda: sum(calls) >= N, "every closing tried")

    assert _statuses(guard, ids) == ["pending"] * N  # sent again on the next start
