"""A job worker in a process of its own, for the crash and scale-out tests.

``python -m tests.integration.jobs.worker_proc DATABASE_URL DIR`` runs two kinds until
killed: ``crashy`` hangs on its first attempt (after writing ``DIR/started-<id>``, so the
test knows when to ``kill -9``) and records later ones; ``record`` appends
``<job id> <pid>`` to ``DIR/runs.log``. ``DIR/ready-<pid>`` says the workers are up.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

from backend.jobs import Job, Jobs
from backend.store.db import open_database

LEASE_S = 1.0


def record(out: Path, job: Job) -> None:
    """Append one run of ``job`` to ``out/runs.log`` (one short O_APPEND write)."""
    with (out / "runs.log").open("a", encoding="utf-8") as fh:
        fh.write(f"{job.id} {os.getpid()}\n")


def build(url: str, out: Path) -> Jobs:
    """The engine with the test kinds registered."""
    jobs = Jobs(open_database(url), poll_s=0.2)

    def crashy(job: Job) -> None:
        if job.attempts == 1:
            (out / f"started-{job.id}").write_text(str(os.getpid()), encoding="utf-8")
            time.sleep(3600)
        record(out, job)

    def slow_record(job: Job) -> None:
        time.sleep(0.01)  # long enough for the other process to try the same rows
        record(out, job)

    jobs.register("crashy", crashy, lease_s=LEASE_S, max_attempts=3)
    jobs.register("record", slow_record, concurrency=2, lease_s=LEASE_S)
    return jobs


async def serve(jobs: Jobs, out: Path) -> None:
    """Run the workers until the process is killed."""
    tasks: list[asyncio.Task[Any]] = []

    def spawn(coro: Any, name: str) -> asyncio.Task[Any]:
        tasks.append(asyncio.create_task(coro, name=name))
        return tasks[-1]

    jobs.start(spawn)
    (out / f"ready-{os.getpid()}").touch()
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    url, directory = sys.argv[1], Path(sys.argv[2])
    asyncio.run(serve(build(url, directory), directory))
