"""Pieces every PR kind's pipeline shares: proposal payloads, gate findings, the record
of a gate job that failed for good, and the QA/SecOps agents' one-PR-at-a-time lock."""

from __future__ import annotations

import logging
import subprocess
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from backend.events import EventLog, EventType
from backend.exceptions import CadenciaError, ValidationError
from backend.gates.runner import GateResult
from backend.prs.git import validate_path
from backend.prs.kinds import rules_for
from backend.prs.records import Finding, PullRequest, PullRequests

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


IN_GATE = ("awaiting_qa", "awaiting_secops")
"""Where a PR waits for a gate job (and where a job that died leaves it stuck)."""


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
