"""Durable gate jobs on SQLite and PostgreSQL: one claimer wins, an expired lease is taken
over, a heartbeat keeps a long run, a job that keeps dying is stuck, rerun re-queues it.

Workers are separate :class:`Database` handles on one database (separate connections, as
two ``cadencia serve`` processes would have); the gates are the real scanners.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_pipeline_support import World, make_world, require_scanners

from backend.agents.store import TeamStore
from backend.events import EventLog
from backend.exceptions import CadenciaError, ConflictError, NotFoundError
from backend.infra.gate_jobs import GateJobs
from backend.infra.job_store import JobStore
from backend.infra.pipeline import InfraPipeline
from backend.store.db import Database, open_database


@pytest.fixture
def second_db(any_db: Database) -> Iterator[Database]:
    """Another handle (its own connections) on the same database: a second worker."""
    db = open_database(any_db.url)  # type: ignore[attr-defined]
    yield db
    db.close()


def _until(condition: Callable[[], object], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _pipeline(world: World, **settings: object) -> InfraPipeline:
    """Another worker's pipeline on the world's database, with its own job settings."""
    return InfraPipeline(world.store, world.settings.model_copy(update=settings))


def test_of_many_workers_racing_for_one_job_exactly_one_claims_it(
    any_db: Database, second_db: Database
) -> None:
    stores = [JobStore(db, lease_s=30, max_attempts=3) for db in (any_db, second_db) * 4]
    stores[0].enqueue("act_race")
    barrier = threading.Barrier(len(stores))
    won: list[tuple[str, int | None]] = []

    def claim(i: int) -> None:
        barrier.wait()
        won.append((f"w{i}", stores[i].claim("act_race", f"w{i}")))

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)

    winners = [(w, attempt) for w, attempt in won if attempt is not None]
    assert len(won) == len(stores)
    assert len(winners) == 1, won
    job = stores[1].get("act_race")
    assert job is not None
    assert (job.status, job.owner, job.attempts) == ("running", winners[0][0], 1)


def test_an_expired_lease_is_claimed_by_another_worker(
    any_db: Database, second_db: Database
) -> None:
    a = JobStore(any_db, lease_s=0.5, max_attempts=3)
    b = JobStore(second_db, lease_s=0.5, max_attempts=3)
    a.enqueue("act_lease")
    assert a.claim("act_lease", "a") == 1
    assert b.claim("act_lease", "b") is None  # a's lease holds

    # "a" dies: no heartbeat, no finish. Once its lease runs out, "b" takes the job over.
    _until(lambda: b.claim("act_lease", "b") is not None, "b to claim the expired job")

    job = b.get("act_lease")
    assert job is not None
    assert (job.status, job.owner, job.attempts) == ("running", "b", 2)
    assert a.heartbeat("act_lease", "a") is False  # the dead owner cannot revive it
    assert a.finish("act_lease", "a") is None
    assert b.finish("act_lease", "b") == "done"


def test_a_request_during_a_run_makes_the_owner_run_once_more(any_db: Database) -> None:
    store = JobStore(any_db, lease_s=30, max_attempts=3)
    store.enqueue("act_again")
    assert store.claim("act_again", "w") == 1

    assert store.enqueue("act_again") == "running"  # asked again while it runs

    assert store.finish("act_again", "w") == "queued"
    assert store.claim("act_again", "w") == 1  # a fresh request: attempts start over
    assert store.finish("act_again", "w") == "done"


def test_the_heartbeat_keeps_a_long_run_from_being_taken_over(
    any_db: Database, second_db: Database
) -> None:
    release = threading.Event()
    ran: list[str] = []

    def long_run(pr_id: str) -> str:
        ran.append(pr_id)
        assert release.wait(60)
        return "finished"

    lease = 1.5  # beats every 0.5s: a second of slack on a loaded machine
    mine = GateJobs(
        JobStore(any_db, lease_s=lease, max_attempts=3),
        long_run,
        result_of=lambda pr_id: "followed",
        on_error=lambda pr_id, message: None,
    )
    other = JobStore(second_db, lease_s=lease, max_attempts=3)
    job = mine.start("act_long")
    _until(lambda: ran == ["act_long"], "the run to start")

    # Three leases long: without the heartbeat the other worker would take it after one.
    deadline = time.monotonic() + 3 * lease
    while time.monotonic() < deadline:
        assert other.claim("act_long", "other") is None
        assert other.claimable() == []
        time.sleep(0.05)
    release.set()

    assert job.wait(30) == "finished"
    stored = other.get("act_long")
    assert stored is not None
    assert (stored.status, stored.attempts, stored.owner) == ("done", 1, None)
    mine.close()


def _kill_repeatedly(world: World, pr: str, times: int, lease: float) -> None:
    """Workers that claim the PR's job and die (no heartbeat, no finish), ``times`` times."""
    store = JobStore(world.db, lease_s=lease, max_attempts=times)
    for n in range(times):
        _until(lambda n=n: store.claim(pr, f"dead-{n}") is not None, f"dead worker {n} to claim")


def test_a_job_that_keeps_dying_is_stuck_until_an_operator_reruns_it(
    any_db: Database, tmp_path: Path
) -> None:
    require_scanners()
    world = make_world(any_db, tmp_path)
    pipeline = _pipeline(world, gate_lease_s=0.3, gate_max_attempts=2)
    pr = world.propose().artifact.pr_action_id  # not auto: no job yet
    assert pipeline.stuck_prs() == []
    pipeline.jobs.store.enqueue(pr)

    _kill_repeatedly(world, pr, 2, lease=0.3)
    _until(lambda: pipeline.stuck_prs() != [], "the job to count as stuck")

    [stuck] = pipeline.stuck_prs()
    assert stuck.pr.id == pr
    assert stuck.pr.gate_status == "awaiting_qa"
    assert "died 2 time(s)" in stuck.reason
    assert pipeline.recover_jobs() == []  # nothing runs a job out of attempts...
    job = pipeline.jobs.store.get(pr)
    assert job is not None
    assert job.status == "failed"  # ...it is given up, and the feed says so
    assert "died 2 time(s)" in world.of_type("infra.pr_failed")[-1].payload["error"]
    assert [s.pr.id for s in pipeline.stuck_prs()] == [pr]

    rerun = pipeline.rerun(pr, "ana", "scanners are back")

    assert rerun.id == pr
    pipeline.jobs.wait_idle(300)
    assert pipeline.get(pr).gate_status == "awaiting_human"
    assert pipeline.stuck_prs() == []
    [event] = world.of_type("pr.gates_rerun")
    assert event.payload["operator"] == "ana"
    assert event.payload["reason"] == "scanners are back"
    assert event.payload["job_status"] == "failed"
    assert (event.project_id, event.session_id) == (world.project.id, world.session_id)
    pipeline.close_jobs()


def test_a_run_that_raised_is_stuck_and_a_rerun_runs_it_again(
    sqlite_db: Database, tmp_path: Path
) -> None:
    require_scanners()
    world = make_world(sqlite_db, tmp_path)
    pr = world.propose().artifact.pr_action_id
    away = tmp_path / "away"
    shutil.move(world.repo.repo_path, away)  # the files can no longer be read back

    with pytest.raises(CadenciaError):
        world.pipeline.start_gates(pr).wait(60)

    [stuck] = world.pipeline.stuck_prs()
    assert stuck.pr.id == pr
    assert stuck.reason.startswith("the gate run failed: ")  # with the run's own error
    assert world.pipeline.recover_jobs() == []  # a failed run is not retried on its own
    shutil.move(away, world.repo.repo_path)

    world.pipeline.rerun(pr, "ana")
    world.pipeline.jobs.wait_idle(300)

    assert world.pipeline.get(pr).gate_status == "awaiting_human"
    assert world.pipeline.stuck_prs() == []
    world.pipeline.close_jobs()


def test_a_pr_waiting_in_a_gate_without_a_job_gets_one_and_runs(
    any_db: Database, tmp_path: Path
) -> None:
    require_scanners()
    world = make_world(any_db, tmp_path)
    pr = world.propose().artifact.pr_action_id  # not auto: like a PR from before gate jobs
    assert world.pipeline.jobs.store.get(pr) is None

    assert world.pipeline.recover_jobs() == [pr]
    world.pipeline.jobs.wait_idle(300)

    assert world.pipeline.get(pr).gate_status == "awaiting_human"
    job = world.pipeline.jobs.store.get(pr)
    assert job is not None
    assert (job.status, job.attempts) == ("done", 1)
    assert world.pipeline.recover_jobs() == []  # nothing left to run
    world.pipeline.close_jobs()


def test_rerun_refuses_a_pr_that_is_not_in_a_gate_and_an_unknown_pr(
    sqlite_db: Database, tmp_path: Path
) -> None:
    require_scanners()
    world = make_world(sqlite_db, tmp_path)
    pr = world.propose().artifact.pr_action_id
    assert world.pipeline.run_gates(pr).gate_status == "awaiting_human"

    with pytest.raises(ConflictError):
        world.pipeline.rerun(pr, "ana")
    with pytest.raises(NotFoundError):
        world.pipeline.rerun("act_nope", "ana")

    assert world.of_type("pr.gates_rerun") == []
    assert world.pipeline.jobs.store.get(pr) is None  # nothing was queued


def test_two_workers_starting_one_prs_gates_run_them_once(pg_db: Database, tmp_path: Path) -> None:
    require_scanners()
    world = make_world(pg_db, tmp_path)
    pr = world.propose().artifact.pr_action_id
    other_db = open_database(pg_db.url)  # type: ignore[attr-defined]
    try:
        other = InfraPipeline(TeamStore(EventLog(other_db)), world.settings)
        barrier = threading.Barrier(2)

        def start(pipeline: InfraPipeline) -> str:
            barrier.wait()
            return str(pipeline.start_gates(pr).wait(300).gate_status)

        results: list[str] = []
        threads = [
            threading.Thread(target=lambda p=p: results.append(start(p)))
            for p in (world.pipeline, other)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)

        assert results == ["awaiting_human", "awaiting_human"]
        assert len(world.of_type("artifact.qa_verdict")) == 1
        assert len(world.of_type("artifact.secops_verdict")) == 1
        job = world.pipeline.jobs.store.get(pr)
        assert job is not None
        assert (job.status, job.attempts) == ("done", 1)
        other.close_jobs()
    finally:
        other_db.close()
    world.pipeline.close_jobs()
