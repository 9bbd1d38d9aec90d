"""The job engine on SQLite and PostgreSQL: idempotent enqueue, leases that survive a
``kill -9``, one run per job across processes, retries, dead jobs, timers, cancel.

Waits poll the stored job with generous deadlines; nothing asserts on a tight sleep.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from backend.jobs import Backoff, Job, Jobs, RetryAfterError, SnoozeError, UnknownKindError
from backend.store.db import Database, open_database

ROOT = Path(__file__).resolve().parents[3]
DEADLINE_S = 60.0


@asynccontextmanager
async def running(*engines: Jobs) -> AsyncIterator[None]:
    """Run the engines' workers on this loop for the block."""
    tasks: list[asyncio.Task[Any]] = []

    def spawn(coro: Any, name: str) -> asyncio.Task[Any]:
        tasks.append(asyncio.create_task(coro, name=name))
        return tasks[-1]

    for engine in engines:
        engine.start(spawn)
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def until(check: Callable[[], Any], what: str, deadline_s: float = DEADLINE_S) -> Any:
    """Poll ``check`` (in a thread: it may read the database) until it is truthy."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        found = await asyncio.to_thread(check)
        if found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def state_of(engine: Jobs, job_id: int) -> str:
    job = engine.get(job_id)
    assert job is not None
    return job.state


@pytest.fixture
def other_db(any_db: Database) -> Any:
    """A second handle on the same database, as another process would open."""
    db = open_database(any_db.url)
    yield db
    db.close()


def test_enqueue_with_a_unique_key_is_idempotent_until_the_job_finishes(
    any_db: Database,
) -> None:
    jobs = Jobs(any_db)
    jobs.register("k", lambda job: None)
    first, created = jobs.enqueue("k", {"n": 1}, unique_key="once")
    again, created_again = jobs.enqueue("k", {"n": 2}, unique_key="once")
    assert (again, created, created_again) == (first, True, False)
    job = jobs.get(first)
    assert job is not None
    assert job.payload == {"n": 1}
    assert job.state == "queued"
    assert jobs.cancel(first)
    fresh, created_fresh = jobs.enqueue("k", {"n": 3}, unique_key="once")
    assert created_fresh
    assert fresh != first
    with pytest.raises(UnknownKindError):
        jobs.enqueue("nobody-registered-this")


async def test_a_job_runs_once_and_is_done(any_db: Database) -> None:
    seen: list[dict[str, Any]] = []
    jobs = Jobs(any_db, poll_s=0.2)
    jobs.register("k", lambda job: seen.append(job.payload))
    async with running(jobs):
        job_id, _ = jobs.enqueue("k", {"x": "y"})
        await until(lambda: state_of(jobs, job_id) == "done", "the job to be done")
    assert seen == [{"x": "y"}]


async def test_a_job_that_always_fails_is_dead_after_max_attempts(any_db: Database) -> None:
    calls: list[int] = []

    def fail(job: Job) -> None:
        calls.append(job.attempts)
        raise RuntimeError("the remote said no")

    jobs = Jobs(any_db, poll_s=0.2)
    jobs.register("fail", fail, max_attempts=3, backoff=Backoff(base_s=0.01, max_s=0.05))
    async with running(jobs):
        job_id, _ = jobs.enqueue("fail")
        await until(lambda: state_of(jobs, job_id) == "dead", "the job to be dead")
    job = jobs.get(job_id)
    assert job is not None
    assert calls == [1, 2, 3]
    assert job.attempts == 3
    assert job.last_error == "RuntimeError: the remote said no"
    assert [d.id for d in jobs.dead()] == [job_id]
    assert jobs.rerun(job_id)
    assert state_of(jobs, job_id) == "queued"
    assert not jobs.drop(job_id)  # only a dead job is dropped


def test_a_dropped_dead_job_stays_cancelled(any_db: Database) -> None:
    jobs = Jobs(any_db)
    jobs.register("k", lambda job: None, max_attempts=1)
    job_id, _ = jobs.enqueue("k")
    [claimed] = jobs.store.claim("k", "me", limit=1, lease_s=30)
    assert jobs.store.bury(claimed, error="gave up")
    assert jobs.drop(job_id)
    assert state_of(jobs, job_id) == "cancelled"
    assert jobs.dead() == []
    assert not jobs.rerun(job_id)


def test_a_job_enqueued_in_a_transaction_that_rolls_back_does_not_exist(
    any_db: Database,
) -> None:
    jobs = Jobs(any_db)
    jobs.register("k", lambda job: None)
    enqueued: list[int] = []

    def domain_write_fails() -> None:
        with any_db.transaction() as tx:
            enqueued.append(jobs.enqueue("k", unique_key="with-the-domain-row", tx=tx)[0])
            raise RuntimeError("the domain's write failed")

    with pytest.raises(RuntimeError):
        domain_write_fails()
    assert jobs.get(enqueued[0]) is None
    _, created = jobs.enqueue("k", unique_key="with-the-domain-row")
    assert created


async def test_retry_after_from_the_handler_sets_the_next_run(any_db: Database) -> None:
    def later(job: Job) -> None:
        raise RetryAfterError(120, "busy")

    jobs = Jobs(any_db, poll_s=0.2)
    jobs.register("later", later, max_attempts=5)
    async with running(jobs):
        before = time.time()
        job_id, _ = jobs.enqueue("later")
        await until(lambda: state_of(jobs, job_id) == "failed", "the first attempt to fail")
        after = time.time()
    job = jobs.get(job_id)
    assert job is not None
    assert before + 120 <= job.run_at <= after + 120
    assert job.attempts == 1
    assert job.last_error == "RetryAfterError: busy"


async def test_a_timer_fires_after_a_restart(any_db: Database, other_db: Database) -> None:
    first = Jobs(any_db, poll_s=0.2)
    first.register("timer", lambda job: None)
    due = time.time() + 2.0
    job_id, _ = first.enqueue("timer", {"what": "sla"}, run_at=due)
    async with running(first):
        await asyncio.sleep(0.3)  # the first process runs briefly, then goes away
    assert state_of(first, job_id) == "queued"

    fired: list[float] = []
    second = Jobs(other_db, poll_s=0.2)
    second.register("timer", lambda job: fired.append(time.time()))
    async with running(second):
        await until(lambda: state_of(second, job_id) == "done", "the timer to fire")
    assert len(fired) == 1
    assert fired[0] >= due


async def test_a_cancelled_job_never_runs_and_a_running_one_keeps_its_state(
    any_db: Database,
) -> None:
    ran: list[int] = []
    release = threading.Event()

    def block(job: Job) -> None:
        ran.append(job.id)
        release.wait(DEADLINE_S)

    jobs = Jobs(any_db, poll_s=0.2)
    jobs.register("block", block)
    waiting, _ = jobs.enqueue("block", run_at=time.time() + 0.5)
    assert jobs.cancel(waiting)
    assert not jobs.cancel(waiting)  # already finished
    async with running(jobs):
        busy, _ = jobs.enqueue("block")
        await until(lambda: busy in ran, "the second job to start")
        assert jobs.cancel(busy)
        release.set()
        await until(lambda: not jobs.store.next_due("block"), "nothing left to run")
    assert ran == [busy]
    assert state_of(jobs, waiting) == "cancelled"
    assert state_of(jobs, busy) == "cancelled"


async def test_a_recurring_job_is_one_row_and_two_engines_never_run_a_tick_twice(
    any_db: Database, other_db: Database
) -> None:
    spans: list[tuple[float, float]] = []

    def tick(job: Job) -> None:
        start = time.time()
        time.sleep(0.05)
        spans.append((start, time.time()))

    engines = [Jobs(db, poll_s=0.1) for db in (any_db, other_db)]
    for engine in engines:
        engine.register("tick", tick)
    ids = {engine.every("tick", 0.2) for engine in engines}
    assert len(ids) == 1
    async with running(*engines):
        await until(lambda: len(spans) >= 6, "six ticks")
    job = engines[0].get(ids.pop())
    assert job is not None
    assert job.period_s == 0.2
    assert job.state in ("queued", "running")
    ordered = sorted(spans)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(ordered))


def _worker(url: str, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.integration.jobs.worker_proc", url, str(out)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _runs(out: Path) -> list[str]:
    log = out / "runs.log"
    return log.read_text(encoding="utf-8").split() if log.exists() else []


async def test_kill_9_mid_job_is_taken_again_exactly_once(
    any_db: Database, other_db: Database, tmp_path: Path
) -> None:
    from tests.integration.jobs.worker_proc import build

    seed = Jobs(any_db)
    seed.register("crashy", lambda job: None, max_attempts=3)
    job_id, _ = seed.enqueue("crashy")
    proc = _worker(any_db.url, tmp_path)
    try:
        await until(lambda: (tmp_path / f"started-{job_id}").exists(), "the worker to start it")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=DEADLINE_S)
    assert state_of(seed, job_id) == "running"  # the dead worker still holds its lease

    # Two engines of this process race for the lapsed job: one takes it, once.
    takers = [build(db.url, tmp_path) for db in (any_db, other_db)]
    async with running(*takers):
        await until(lambda: state_of(seed, job_id) == "done", "the job to be taken again")
        await asyncio.sleep(3 * 1.0)  # three leases: a second taker would have run by now
    job = seed.get(job_id)
    assert job is not None
    assert job.attempts == 2
    assert _runs(tmp_path) == [str(job_id), str(os.getpid())]


async def test_two_worker_processes_run_each_job_once(any_db: Database, tmp_path: Path) -> None:
    seed = Jobs(any_db)
    seed.register("record", lambda job: None)
    ids = [seed.enqueue("record", {"n": n})[0] for n in range(40)]
    procs = [_worker(any_db.url, tmp_path) for _ in range(2)]
    try:
        await until(lambda: all(state_of(seed, i) == "done" for i in ids), "every job to be done")
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=DEADLINE_S)
    runs = _runs(tmp_path)
    job_ids = [int(x) for x in runs[0::2]]
    assert sorted(job_ids) == ids  # each job ran, and only once


async def test_the_heartbeat_keeps_a_long_job_from_a_second_worker(
    any_db: Database, other_db: Database
) -> None:
    runs: list[str] = []

    def long(job: Job) -> None:
        runs.append(job.owner or "")
        time.sleep(3 * 1.5)  # three leases: only the heartbeat keeps the job its own

    engines = [Jobs(db, poll_s=0.1) for db in (any_db, other_db)]
    for engine in engines:
        engine.register("long", long, lease_s=1.5)
    async with running(*engines):
        job_id, _ = engines[0].enqueue("long")
        await until(lambda: state_of(engines[0], job_id) == "done", "the long job to be done")
    job = engines[0].get(job_id)
    assert job is not None
    assert job.attempts == 1
    assert len(runs) == 1


async def test_a_lapsed_last_attempt_is_dead_and_a_recurring_one_waits_for_its_tick(
    any_db: Database,
) -> None:
    jobs = Jobs(any_db)
    jobs.register("once", lambda job: None, max_attempts=1)
    jobs.register("tick", lambda job: None, max_attempts=1)
    one_off, _ = jobs.enqueue("once")
    recurring = jobs.every("tick", 600)
    for kind in ("once", "tick"):  # claimed by a worker that dies at once
        assert jobs.store.claim(kind, "dies", limit=1, lease_s=0.01)
    await until(lambda: jobs.store.bury_lapsed("once"), "the one-off's lease to lapse")
    before = time.time()
    await until(lambda: jobs.store.bury_lapsed("tick"), "the recurring job's lease to lapse")
    dead, ticking = jobs.get(one_off), jobs.get(recurring)
    assert dead is not None
    assert ticking is not None
    assert dead.state == "dead"
    assert dead.last_error is not None
    assert "lease lapsed" in dead.last_error
    assert ticking.state == "queued"
    assert ticking.attempts == 0
    assert before + 600 <= ticking.run_at <= time.time() + 600


async def test_a_recurring_job_whose_attempts_all_fail_waits_for_its_next_tick(
    any_db: Database,
) -> None:
    calls: list[int] = []

    def fail(job: Job) -> None:
        calls.append(job.attempts)
        raise RuntimeError("gateway down")

    jobs = Jobs(any_db, poll_s=0.2)
    jobs.register("tick", fail, max_attempts=2, backoff=Backoff(base_s=0.01, max_s=0.02))
    before = time.time()
    async with running(jobs):
        job_id = jobs.every("tick", 600)
        await until(lambda: len(calls) == 2, "both attempts")
        await until(
            lambda: (j := jobs.get(job_id)) is not None and j.attempts == 0, "the next tick"
        )
    job = jobs.get(job_id)
    assert job is not None
    assert calls == [1, 2]
    assert job.state == "queued"
    assert job.last_error == "RuntimeError: gateway down"
    assert before + 600 <= job.run_at <= time.time() + 600
    assert jobs.dead() == []


async def test_a_request_while_the_job_runs_makes_it_run_once_more(any_db: Database) -> None:
    jobs = Jobs(any_db, poll_s=0.05)
    started, release = threading.Event(), threading.Event()
    runs: list[int] = []

    def handler(job: Job) -> None:
        runs.append(job.id)
        started.set()
        assert release.wait(DEADLINE_S)

    jobs.register("k", handler)
    job_id, _ = jobs.enqueue("k", unique_key="pr-1", again=True)
    async with running(jobs):
        await until(started.is_set, "the first run to start")
        again_id, created = await asyncio.to_thread(
            jobs.enqueue, "k", unique_key="pr-1", again=True
        )
        assert (again_id, created) == (job_id, False)  # no second job...
        release.set()
        await until(lambda: len(runs) == 2 and state_of(jobs, job_id) == "done", "a rerun")
    assert runs == [job_id, job_id]  # ...the same job ran once more
    job = jobs.get(job_id)
    assert job is not None
    assert (job.attempts, job.again) == (1, False)


async def test_a_snoozed_job_waits_without_spending_attempts(any_db: Database) -> None:
    jobs = Jobs(any_db, poll_s=0.05)
    tries: list[int] = []

    def handler(job: Job) -> None:
        tries.append(job.attempts)
        if len(tries) < 4:
            raise SnoozeError(0.01, "the agent is paused")

    jobs.register("k", handler, max_attempts=2)
    job_id, _ = jobs.enqueue("k")
    async with running(jobs):
        await until(lambda: state_of(jobs, job_id) == "done", "the job to run at last")
    assert tries == [1, 1, 1, 1]  # four tries, each the first attempt: never dead


def test_drain_runs_due_jobs_here_and_tells_on_dead_once(any_db: Database) -> None:
    told: list[tuple[str, int]] = []
    jobs = Jobs(any_db, on_dead=lambda job: told.append(("engine", job.id)))
    jobs.register(
        "k",
        lambda job: (_ for _ in ()).throw(RuntimeError("down")),
        max_attempts=1,
        on_dead=lambda job: told.append(("kind", job.id)),
    )
    jobs.register("ok", lambda job: None)
    bad, _ = jobs.enqueue("k")
    good, _ = jobs.enqueue("ok")

    assert (jobs.drain("k"), jobs.drain("ok")) == (1, 1)

    assert (state_of(jobs, bad), state_of(jobs, good)) == ("dead", "done")
    assert told == [("kind", bad), ("engine", bad)]
    assert jobs.wait(good, timeout=1).state == "done"
    jobs.wait_idle("k", timeout=1)
    assert jobs.drain("k") == 0
