"""Pieces the infra and dev-task pipelines share: proposal payloads, gate findings, and
the background runner for gate jobs (at most one running job per PR)."""

from __future__ import annotations

import logging
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext, suppress
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from backend.events import EventLog, EventType
from backend.exceptions import ValidationError
from backend.gates.runner import GateResult
from backend.infra.git import validate_path
from backend.infra.prs import Finding

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
        ["git", "-C", str(repo), "update-ref", "-d", f"refs/heads/{branch}", expected],
        capture_output=True,
        check=False,
        timeout=30,
    )


class GateJob:
    """A background gate run; :meth:`wait` returns its result or raises its error."""

    def __init__(self, key: str, future: Future[Any]) -> None:
        self.key = key
        self.future = future

    def done(self) -> bool:
        """Whether the run has finished."""
        return self.future.done()

    def wait(self, timeout: float | None = None) -> Any:
        """Block until the run ends; its return value, or its exception re-raised."""
        return self.future.result(timeout)


class BackgroundJobs:
    """At most one running job per key, on a small thread pool (scanners are subprocesses)."""

    def __init__(self, on_error: Callable[[str, BaseException], None], workers: int = 2) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gates")
        self._jobs: dict[str, GateJob] = {}
        self._lock = threading.Lock()
        self._on_error = on_error

    def start(self, key: str, fn: Callable[[], Any]) -> GateJob:
        """Run ``fn`` in the background unless a job for ``key`` is still running."""
        with self._lock:
            running = self._jobs.get(key)
            if running is not None and not running.done():
                return running
            job = GateJob(key, self._pool.submit(self._guarded, key, fn))
            self._jobs[key] = job
            return job

    def _guarded(self, key: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except BaseException as exc:
            log.exception("background gate job %s failed", key)
            try:
                self._on_error(key, exc)
            except Exception:
                log.exception("could not record the failure of job %s", key)
            raise

    def wait_idle(self, timeout: float | None = None) -> None:
        """Wait for every job started so far (tests, shutdown); errors are not re-raised."""
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            with suppress(Exception):
                job.wait(timeout)

    def close(self) -> None:
        """Finish running jobs and stop the pool."""
        self._pool.shutdown(wait=True)


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
