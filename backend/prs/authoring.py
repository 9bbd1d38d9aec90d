"""A correction's input, and the author who writes it: a model turn or the rule-based fixer.

After a gate failure or an operator's reject, the PR's findings (the operator's reason is a
finding of gate ``human``) are what the author is asked to fix: the agent's model turn
(:class:`ModelAuthor`) when it is bound to a provider, else the kind's offline fixer. A
correction whose files are identical to the PR's head is not committed and not counted
(see :meth:`backend.prs.flow.PrFlow.propose`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from backend.exceptions import UnavailableError
from backend.prs.records import Finding, PullRequest

if TYPE_CHECKING:
    from backend.agents.team_service import TeamService

NO_CHANGE = "no change"
"""The note (and the feed's word) for a correction with no diff."""


@dataclass(frozen=True)
class CorrectionRequest:
    """What the author of ``pr`` is asked to fix, and with which tool."""

    pr: PullRequest
    files: dict[str, str]
    """The PR's files at its head."""
    findings: list[Finding]
    tool: str
    """The tool the author proposes with (``propose_infra_pr``)."""

    @property
    def reasons(self) -> list[str]:
        """The operators' reasons (findings of gate ``human``), oldest first."""
        return [str(f.get("message") or "") for f in self.findings if f.get("gate") == "human"]

    @property
    def gate_findings(self) -> list[Finding]:
        """The QA/SecOps findings (everything but the operators' reasons)."""
        return [f for f in self.findings if f.get("gate") != "human"]


@dataclass(frozen=True)
class AuthorTurn:
    """What the author's correction turn did: its answer and its proposing tool's results."""

    text: str | None
    proposals: list[dict[str, Any]] = field(default_factory=list)
    """One ``{"result": ..., "error": bool}`` per call of the proposing tool, in order."""

    def statuses(self) -> list[str]:
        """The ``status`` of each successful proposal (``corrected``, ``unchanged``...)."""
        return [
            str(p["result"].get("status"))
            for p in self.proposals
            if not p.get("error") and isinstance(p.get("result"), Mapping)
        ]

    def errors(self) -> list[str]:
        """The error message of each proposal that failed."""
        return [
            str((p.get("result") or {}).get("error") or "failed")
            for p in self.proposals
            if p.get("error")
        ]


CorrectionAuthor = Callable[[CorrectionRequest], AuthorTurn | None]
"""Run the author's correction turn; ``None`` when the author is not on a model (then the
rule-based fixer corrects). Called from a gate-job thread, never from an event loop."""


def correction_message(request: CorrectionRequest) -> str:
    """The user message of a correction turn: the reasons, the findings, the files."""
    pr = request.pr
    lines = [f"Your PR {pr.id} ({pr.title}, branch {pr.branch}) came back: changes requested."]
    for reason in request.reasons:
        lines.append(f"The operator rejected it with this reason: {reason}")
    found = request.gate_findings
    if found:
        lines.append("The gates' findings:")
        lines += [f"- {_finding_line(f)}" for f in found]
    lines.append(f"The files at the PR's head ({pr.head[:10]}):")
    for path, content in sorted(request.files.items()):
        lines += [f"--- {path}", content.rstrip("\n"), f"--- end of {path}"]
    lines.append(
        f"Fix what is asked and call {request.tool} again with the corrected files (the same "
        "PR; files you leave out stay as they are). Proposing the files unchanged is refused."
    )
    return "\n".join(lines)


def _finding_line(finding: Finding) -> str:
    where = str(finding.get("file") or "")
    if where and finding.get("line"):
        where = f"{where}:{finding['line']}"
    head = f"[{finding.get('gate', '?')}] {finding.get('tool', '?')} {finding.get('rule', '')}"
    return f"{head.strip()}{f' {where}' if where else ''}: {finding.get('message', '')}"


def same_files(current: Mapping[str, str], proposed: Mapping[str, str]) -> bool:
    """Whether every proposed file is already at the head with the same content."""
    return all(path in current and current[path] == c for path, c in proposed.items())


class ModelAuthor:
    """A :data:`CorrectionAuthor` that runs the author's turn on the backend's event loop.

    Corrections run in gate-job threads; the agent runtime is async and its state belongs
    to one loop: the per-(session, agent) lock that serializes an agent's turns, the
    provider's HTTP client and the log's publishers. A private loop per job would let a
    correction turn race an operator's turn of the same agent and share nothing, so the
    job thread submits the turn to the backend's loop and waits for it (the loop stays
    free: the turn's tools run in worker threads).

    When the kind's author has a proposing tool and that agent is bound to a model provider,
    the backend hands the flow this :data:`CorrectionAuthor`: it runs one model turn of that
    agent whose message (:func:`correction_message`) carries the reason, the findings and the
    files at the PR's head, and the model calls its tool again, which commits on the same PR.
    When no author is given, or it answers ``None`` (the rule-based planner is bound), the
    kind's offline fixer applies what it can.

    Args:
        team: runs the turn (``None`` back when the agent is on the rule-based planner).
        loop: the backend's running loop.
        timeout_s: how long a job waits for the turn before giving up (503).
    """

    def __init__(
        self, team: TeamService, loop: asyncio.AbstractEventLoop, timeout_s: float = 600.0
    ) -> None:
        self.team = team
        self.loop = loop
        self.timeout_s = timeout_s
        self._loop_thread = threading.get_ident() if loop.is_running() else None

    def __call__(self, request: CorrectionRequest) -> AuthorTurn | None:
        if threading.get_ident() == self._loop_thread:
            raise RuntimeError("a correction turn must not be awaited from the event loop")
        if self.loop.is_closed():
            raise UnavailableError("the backend is shutting down: no correction turn")
        future = asyncio.run_coroutine_threadsafe(self._turn(request), self.loop)
        try:
            return future.result(self.timeout_s)
        except concurrent.futures.TimeoutError as exc:
            future.cancel()
            raise UnavailableError(
                f"the {request.pr.author} agent's correction turn took over {self.timeout_s:g}s",
                pr_action_id=request.pr.id,
            ) from exc

    async def _turn(self, request: CorrectionRequest) -> AuthorTurn | None:
        pr = request.pr
        result = await self.team.correction_turn(
            pr.project_id,
            pr.session_id if pr.task_id is None else pr.task_id,  # a dev turn runs on its task
            pr.author,
            correction_message(request),
        )
        if result is None:
            return None
        calls = [r for r in result.tool_results if r.get("tool") == request.tool]
        return AuthorTurn(
            result.text, [{"result": r["result"], "error": r["error"]} for r in calls]
        )
