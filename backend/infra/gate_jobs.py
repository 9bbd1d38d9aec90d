"""Pieces the infra and dev-task pipelines share: proposal payloads, gate findings, and
the runner of durable gate jobs (:mod:`backend.infra.job_store`; one run per PR at a time,
across every process on the database)."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from backend.events import EventLog, EventType
from backend.exceptions import CadenciaError, ConflictError, ValidationError
from backend.gates.runner import GateResult
from backend.infra.git import validate_path
from backend.infra.job_store import JobStore, died_reason
from backend.infra.kinds import rules_for
from backend.infra.prs import Finding, PullRequest, PullRequests
from backend.settings import Settings
from backend.store.db import Database

log = logging.getLogger(__name__)


class ProposedFile(BaseModel):
    """One file of a proposal (the tool argument's item)."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1)
    content: str


def files_payload(files: Sequence[Mapping[str, Any]] | Mapping[str, str]) -> dict[str, str]:
    """Validate a proposal's files: a list of ``{path, content}`` (or a path → content map).

    Raises:
        ValidationError: empty, malformed, or the same path twice.
        PathError: a path that could escape the repository (nothing is written).
    """
    items = (
        [{"path": p, "content": c} for p, c in files.items()]
        if isinstance(files, Mapping)
        else list(files)
    )
    if not items:
        raise ValidationError("a PR needs at least one file")
    out: dict[str, str] = {}
    for item in items:
        try:
            parsed = ProposedFile.model_validate(item)
        except PydanticValidationError as exc:
            raise ValidationError(f"invalid file entry: {exc.errors()[0]['msg']}") from exc
        if parsed.path in out:
            raise ValidationError(f"file {parsed.path!r} appears twice", path=parsed.path)
        out[validate_path(parsed.path)] = parsed.content
    return out


def gate_findings(result: GateResult) -> list[Finding]:
    """A gate's findings as stored and sent to the author, plus one per skipped scanner."""
    found: list[Finding] = [{**f.to_json(), "gate": result.gate} for f in result.findings]
    for scan in result.scans:
        if scan.status == "skipped":
            found.append(
                {
                    "tool": scan.tool,
                    "rule": "skipped",
                    "file": "",
                    "line": None,
                    "severity": "error",
                    "gate": result.gate,
                    "message": f"{scan.tool} could not run: {scan.detail or 'unknown'}",
                }
            )
    return found


def drop_branch(repo: Path, branch: str, expected: str) -> None:
    """Delete ``branch`` if it still points at ``expected`` (undo a half-opened PR)."""
    subprocess.run(
        ["git", "-C", str(repo), "update-ref", "-d", "--", f"refs/heads/{branch}", expected],
        capture_output=True,
        check=False,
        timeout=30,
    )


@dataclass(frozen=True)
class StuckPr:
    """A PR waiting in a gate whose job will not run again on its own (``pr_stuck``).

    Attributes:
        pr: the PR, still ``awaiting_qa`` / ``awaiting_secops``.
        since: ISO 8601 UTC, when its job failed or was given up.
        reason: one line: the run's error, or how many times it died.
    """

    pr: PullRequest
    since: str
    reason: str


IN_GATE = ("awaiting_qa", "awaiting_secops")
"""Where a PR waits for a gate job (and where a job that died leaves it stuck)."""

_ELSEWHERE = object()
"""What a local run returns when another worker owns the job (``GateJob.wait`` follows it)."""


class GateJob:
    """This process's handle on a PR's gate job; :meth:`wait` returns its result or raises."""

    def __init__(self, key: str, future: Future[Any], follow: Callable[[str, float | None], Any]):
        self.key = key
        self.future = future
        self._follow = follow

    def done(self) -> bool:
        """Whether this process's part of the run has finished."""
        return self.future.done()

    def wait(self, timeout: float | None = None) -> Any:
        """Block until the job ends; its return value, or its exception re-raised.

        When another worker owns the job, waits for that worker to finish it (or for its
        lease to expire, then runs it here).
        """
        result = self.future.result(timeout)
        if result is _ELSEWHERE:
            return self._follow(self.key, timeout)
        return result


class GateJobs:
    """Durable gate jobs (:class:`JobStore`) run on a small local thread pool.

    :meth:`start` records a request for the PR's gates and runs it here unless another
    worker owns the job; :meth:`recover` (at start-up and periodically) adopts PRs with no
    job, gives up on jobs that died ``max_attempts`` times and runs every claimable job.
    While ``work`` runs, a heartbeat thread extends the lease every third of it.

    Args:
        store: the jobs table.
        work: runs one PR's gates; its return value is what :meth:`GateJob.wait` gives.
        result_of: the result of a job another worker finished (the PR as stored).
        on_error: records a run that raised, or a job given up (``pr_id``, message).
        workers: threads running gates at once (scanners are subprocesses).
        poll_s: how often a waiter checks a job another worker owns.
    """

    def __init__(
        self,
        store: JobStore,
        work: Callable[[str], Any],
        *,
        result_of: Callable[[str], Any],
        on_error: Callable[[str, str], None],
        workers: int = 2,
        poll_s: float = 0.25,
    ) -> None:
        self.store = store
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._work = work
        self._result_of = result_of
        self._on_error = on_error
        self._poll_s = poll_s
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gates")
        self._jobs: dict[str, GateJob] = {}
        self._lock = threading.Lock()

    @classmethod
    def on(
        cls,
        db: Database,
        events: EventLog,
        settings: Settings,
        work: Callable[[str], Any],
        prs: PullRequests,
    ) -> GateJobs:
        """The jobs of a PR pipeline: lease and attempts from ``settings``, failures
        recorded as the PR's kind reports them."""
        store = JobStore(db, lease_s=settings.gate_lease_s, max_attempts=settings.gate_max_attempts)
        return cls(
            store,
            work,
            result_of=prs.get,
            on_error=lambda pr_id, message: report_job_failure(prs, events, pr_id, message),
        )

    def start(self, key: str) -> GateJob:
        """Ask for a run of ``key``'s gates and run it here (unless it already runs)."""
        self.store.enqueue(key)
        return self.run(key)

    def run(self, key: str) -> GateJob:
        """Run ``key``'s job here if it can be claimed (a request is already recorded)."""
        with self._lock:
            running = self._jobs.get(key)
            if running is not None and not running.done():
                return running
            job = GateJob(key, self._pool.submit(self._drive, key), self._follow)
            self._jobs[key] = job
            return job

    def recover(self) -> list[str]:
        """Adopt PRs with no job, give up exhausted jobs, run the claimable ones here.

        Returns:
            The PR ids whose jobs this call started.
        """
        self.store.adopt_orphans()
        for job in self.store.give_up_exhausted():
            self._report(job.pr_id, died_reason(job.attempts))
        started = []
        for key in self.store.claimable():
            with self._lock:
                mine = self._jobs.get(key)
                if mine is not None and not mine.done():
                    continue
            self.run(key)
            started.append(key)
        return started

    def _drive(self, key: str) -> Any:
        result: Any = _ELSEWHERE
        while self.store.claim(key, self.owner) is not None:
            error: BaseException | None = None
            try:
                with self._heartbeat(key):
                    result = self._work(key)
            except BaseException as exc:
                log.exception("gate job %s failed", key)
                error = exc
            message = None if error is None else _message(error)
            stored = None if message is None else f"the gate run failed: {message}"
            status = self.store.finish(key, self.owner, stored)
            if status is None:
                log.warning("gate job %s was taken over by another worker", key)
            if message is not None:
                self._report(key, message)
            if status != "queued":  # asked again meanwhile: claim it once more
                if error is not None:
                    raise error
                return result
        return result

    @contextmanager
    def _heartbeat(self, key: str) -> Iterator[None]:
        stop = threading.Event()
        interval = self.store.lease_s / 3

        def beat() -> None:
            while not stop.wait(interval):
                try:
                    if not self.store.heartbeat(key, self.owner):
                        log.warning("gate job %s: lease lost to another worker", key)
                        return
                except Exception:  # the database blinked: the next beat tries again
                    log.exception("gate job %s: heartbeat failed", key)

        thread = threading.Thread(target=beat, name=f"lease-{key}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def _follow(self, key: str, timeout: float | None) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        while deadline is None or time.monotonic() < deadline:
            job = self.store.get(key)
            if job is None or job.status == "done":
                return self._result_of(key)
            if job.status == "failed":
                raise ConflictError(job.last_error or "the gate job failed", pr_action_id=key)
            if not job.live(time.time()):
                if job.attempts >= self.store.max_attempts and job.status == "running":
                    raise ConflictError(died_reason(job.attempts), pr_action_id=key)
                result = self.run(key).future.result(_left(deadline))
                if result is not _ELSEWHERE:
                    return result
            time.sleep(self._poll_s)
        raise TimeoutError(f"the gate job of {key} did not finish in {timeout}s")

    def _report(self, key: str, message: str) -> None:
        try:
            self._on_error(key, message)
        except Exception:
            log.exception("could not record the failure of gate job %s", key)

    def wait_idle(self, timeout: float | None = None) -> None:
        """Wait for every job started here so far (tests, shutdown); errors are not raised."""
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            with suppress(Exception):
                job.wait(timeout)

    def close(self) -> None:
        """Finish the runs in flight here and stop the pool."""
        self._pool.shutdown(wait=True)


def report_job_failure(prs: PullRequests, events: EventLog, pr_id: str, message: str) -> None:
    """Record a gate run that raised (or a job given up) as the PR's kind reports it."""
    try:
        pr: PullRequest | None = prs.get(pr_id)
    except CadenciaError:
        pr = None
    # A PR that cannot be read is an infra PR's failure as far as anyone can tell.
    failure = rules_for(pr.kind if pr else "infra").job_failed(pr, pr_id, message)
    if failure is not None:
        events.append(
            failure.type,
            failure.payload,
            project_id=pr.project_id if pr else None,
            session_id=pr.session_id if pr else None,
            agent=failure.agent,
        )


def _message(exc: BaseException) -> str:
    return getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


_GATE_LOCKS = {"qa": threading.Lock(), "secops": threading.Lock()}


@contextmanager
def agent_at_work(
    events: EventLog, agent: str, project_id: str | None, detail: str
) -> Iterator[None]:
    """``agent.status`` working → idle around one piece of a project-scoped agent's work.

    QA and SecOps are singletons per backend: their gate runs are serialized here, one PR
    at a time, whoever asked (infra PRs and dev task PRs alike).
    """
    lock = _GATE_LOCKS.get(agent)
    with lock if lock is not None else nullcontext():
        events.append(
            EventType.AGENT_STATUS,
            {"status": "working", "detail": detail},
            project_id=project_id,
            agent=agent,
        )
        try:
            yield
        finally:
            events.append(
                EventType.AGENT_STATUS,
                {"status": "idle", "detail": ""},
                project_id=project_id,
                agent=agent,
            )
