"""Gate runs as ``gates`` jobs on the job engine, on SQLite and PostgreSQL: a job whose
workers keep dying, or whose run raises, is dead (the feed and the job list say so) until
an operator reruns it; a rerun runs the gates; two workers starting one PR's gates run them
once. The engine's own rules (claims, leases, heartbeats) are tested in tests/*/jobs/.

Workers are separate :class:`Database` handles on one database (separate connections, as
two ``cadencia serve`` processes would have); the gates are the real scanners.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_pipeline_support import World, make_world, require_scanners

from backend.agents.store import TeamStore
from backend.events import EventLog
from backend.exceptions import ConflictError, NotFoundError
from backend.prs.flow import GATES, gates_key
from backend.prs.pipeline import InfraPipeline
from backend.store.db import Database, open_database


def _until(condition: Callable[[], object], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _pipeline(world: World, **settings: object) -> InfraPipeline:
    """Another worker's pipeline on the world's database, with its own job settings."""
    return InfraPipeline(world.store, world.settings.model_copy(update=settings))


def test_a_gate_job_that_keeps_dying_is_dead_until_an_operator_reruns_it(
    any_db: Database, tmp_path: Path
) -> None:
    require_scanners()
    world = make_world(any_db, tmp_path)
    pipeline = _pipeline(world, gate_lease_s=0.3, gate_max_attempts=2)
    pr = world.propose().artifact.pr_action_id  # not auto: no job yet
    pipeline.start_gates(pr)
    for n in range(2):  # two workers claim it and die (no heartbeat, no outcome)
        _until(
            lambda n=n: pipeline.jobs.store.claim(GATES, f"dead-{n}", limit=1, lease_s=0.3),
            f"dead worker {n} to claim",
        )
    time.sleep(0.35)  # the last lease lapses

    assert pipeline.jobs.drain(GATES) == 0  # nothing runs a job out of attempts...
    job = pipeline.jobs.latest(gates_key(pr))
    assert job is not None
    assert (job.state, job.attempts) == ("dead", 2)  # ...it is dead, and the feed says so
    assert "lease lapsed" in world.of_type("infra.pr_failed")[-1].payload["error"]
    assert [j.id for j in pipeline.jobs.dead()] == [job.id]
    assert pipeline.get(pr).gate_status == "awaiting_qa"

    rerun = pipeline.rerun(pr, "ana", "scanners are back")

    assert rerun.id == pr
    assert pipeline.jobs.drain(GATES) == 1
    assert pipeline.get(pr).gate_status == "awaiting_human"
    assert pipeline.jobs.dead() == []
    [event] = world.of_type("pr.gates_rerun")
    assert event.payload["operator"] == "ana"
    assert event.payload["reason"] == "scanners are back"
    assert event.payload["job_status"] == "dead"
    assert (event.project_id, event.session_id) == (world.project.id, world.session_id)


def test_a_run_that_raised_on_its_last_attempt_is_dead_and_a_rerun_runs_it_again(
    sqlite_db: Database, tmp_path: Path
) -> None:
    require_scanners()
    world = make_world(sqlite_db, tmp_path)
    pipeline = _pipeline(world, gate_max_attempts=1)
    pr = world.propose().artifact.pr_action_id
    away = tmp_path / "away"
    shutil.move(world.repo.repo_path, away)  # the files can no longer be read back

    pipeline.start_gates(pr)
    assert pipeline.jobs.drain(GATES) == 1

    [dead] = pipeline.jobs.dead()
    assert dead.payload == {"pr_id": pr}
    assert dead.last_error  # the run's own error
    failed = world.of_type("infra.pr_failed")[-1].payload["error"]
    assert failed == f"gate run failed: {dead.last_error}"  # the run's error, in the feed
    assert pipeline.jobs.drain(GATES) == 0  # a dead job is not retried on its own
    shutil.move(away, world.repo.repo_path)

    pipeline.rerun(pr, "ana")
    pipeline.wait_gates()

    assert pipeline.get(pr).gate_status == "awaiting_human"
    assert pipeline.jobs.dead() == []


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
    assert world.pipeline.jobs.latest(gates_key(pr)) is None  # nothing was queued


def test_two_workers_starting_one_prs_gates_run_them_once(pg_db: Database, tmp_path: Path) -> None:
    require_scanners()
    world = make_world(pg_db, tmp_path)
    pr = world.propose().artifact.pr_action_id
    other_db = open_database(pg_db.url)  # type: ignore[attr-defined]
    try:
        other = InfraPipeline(TeamStore(EventLog(other_db)), world.settings)
        barrier = threading.Barrier(2)
        ran: list[int] = []

        def start(pipeline: InfraPipeline) -> None:
            pipeline.start_gates(pr)  # both ask before either runs: one job
            barrier.wait()
            ran.append(pipeline.jobs.drain(GATES))

        threads = [threading.Thread(target=start, args=(p,)) for p in (world.pipeline, other)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)

        assert sorted(ran) == [0, 1]  # one job, one claimer
        assert world.pipeline.get(pr).gate_status == "awaiting_human"
        assert len(world.of_type("artifact.qa_verdict")) == 1
        assert len(world.of_type("artifact.secops_verdict")) == 1
        job = world.pipeline.jobs.latest(gates_key(pr))
        assert job is not None
        assert (job.state, job.attempts) == ("done", 1)
    finally:
        other_db.close()
