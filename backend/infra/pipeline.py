"""The infra PR use cases: propose (or correct), run the gates, operator actions.

ADR 0014 decisions 3 and 4. ``propose_infra_pr`` goes through :func:`decide`; the first call of
a session creates ``feature/infra-setup`` from ``main``, commits every file in ONE commit,
opens the PR and inserts the artifact in ``awaiting_qa``. Any later call in the same
session is a correction: one more commit on the SAME branch and PR, no new row — the
Infra agent uses the same tool either way and the difference lives here.

``run_gates`` is deterministic: QA on the files read back from git at the recorded head,
then SecOps only after a QA pass. Each verdict goes through the shared state machine
(:func:`next_gate_status`) and a conditional UPDATE, with its events in the same
transaction. ``start_gates`` runs that in a background thread (fire-and-forget, like the
ADR's ``Task.start``); a failure there becomes an ``infra.pr_failed`` event.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from backend.agents.policy import Decision, decide
from backend.agents.store import TeamStore, new_id
from backend.events import Event, utcnow_iso
from backend.exceptions import CadenciaError, ConflictError, ValidationError
from backend.gates.runner import GateResult, run_qa, run_secops
from backend.gates.scanners._base import DEFAULT_TIMEOUT_S
from backend.gates.state import GateEvent, Transition, next_gate_status
from backend.gates.verdicts import verdict_event
from backend.infra import planner
from backend.infra.artifacts import Finding, HistoryEntry, InfraArtifact, InfraArtifacts
from backend.infra.gate_jobs import (
    BackgroundJobs,
    GateJob,
    agent_at_work,
    drop_branch,
    files_payload,
    gate_findings,
)
from backend.infra.git import DEFAULT_BRANCH, GitProvider
from backend.settings import Settings, load_settings
from backend.store.db import Tx

log = logging.getLogger(__name__)

INFRA_AGENT = "infra"
INFRA_BRANCH = "feature/infra-setup"
SETTLED: frozenset[str] = frozenset({"awaiting_human", "blocked", "merged", "closed"})
GateName = Literal["qa", "secops"]
VerdictValue = Literal["pass", "fail", "skipped"]


@dataclass(frozen=True)
class ProposalResult:
    """What ``propose_infra_pr`` did: opened a PR, committed a correction, or is pending."""

    status: Literal["opened", "corrected", "pending"]
    decision: Decision
    artifact: InfraArtifact | None = None
    approval_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The tool result handed back to the model."""
        out: dict[str, Any] = {"status": self.status, "decision": self.decision.to_dict()}
        if self.artifact is not None:
            out.update(
                pr_action_id=self.artifact.pr_action_id,
                branch=self.artifact.branch,
                pr_url=self.artifact.pr_url,
                head=self.artifact.head,
                gate_status=self.artifact.gate_status,
            )
        if self.approval_id is not None:
            out["approval_id"] = self.approval_id
        return out


class InfraPipeline:
    """The infra PR use cases over the team store, git and the gate runner.

    Args:
        store: projects, sessions, autonomy, approvals, and the event log.
        settings: ``gate_correction_limit``, ``semgrep_bin``, ``data_dir``.
        permissions: ``permissions.json`` for :func:`decide` (default: the data dir's file).
        auto: start the gates after every proposal and let the agent correct on its own
            (the server); tests drive each step explicitly instead.
        timeout_s: limit for each scanner subprocess.
    """

    def __init__(
        self,
        store: TeamStore,
        settings: Settings | None = None,
        *,
        permissions: Any = None,
        auto: bool = False,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.store = store
        self.events = store.events
        self.db = store.db
        self.settings = settings or load_settings()
        self.permissions = (
            permissions if permissions is not None else self.settings.data_dir / "permissions.json"
        )
        self.auto = auto
        self.timeout_s = timeout_s
        self.artifacts = InfraArtifacts(self.db)
        self.jobs = BackgroundJobs(self._record_job_error)

    @property
    def limit(self) -> int:
        """Corrections allowed before a failure blocks (``gate_correction_limit``)."""
        return self.settings.gate_correction_limit

    # -- the Infra agent's tool ------------------------------------------------------------

    def propose_infra_pr(
        self,
        project_id: str,
        session_id: str,
        title: str,
        files: Sequence[Mapping[str, Any]] | Mapping[str, str],
        agent: str = INFRA_AGENT,
    ) -> ProposalResult:
        """Open the session's infra PR, or commit a correction on it.

        Raises:
            ValidationError: bad title/files, or a project without a repository.
            PathError: a path that could escape the repository; nothing is written.
            ConflictError: ``decide()`` denied the action, the artifact is not in
                ``changes_requested`` for a correction, or the branch already exists.
            NotFoundError: unknown project or session.
        """
        if not title.strip():
            raise ValidationError("a PR needs a title")
        project = self.store.project(project_id)
        if self.store.session(session_id)["project_id"] != project_id:
            raise ValidationError(f"session {session_id} is not in project {project_id}")
        existing = self.artifacts.find_by_session(session_id)
        pr_action_id = existing.pr_action_id if existing else new_id("act")
        try:
            payload = files_payload(files)
        except CadenciaError as exc:
            self._failed(pr_action_id, exc, project_id, session_id, agent)
            raise
        decision = decide(
            agent,
            "open_infra_pr",
            autonomy=self.store.autonomy(project_id),
            permissions=self.permissions,
        )
        self._emit(
            None,
            "action.decided",
            {"action": "open_infra_pr", **decision.to_dict()},
            project_id,
            session_id,
            agent,
        )
        if decision.outcome == "deny":
            raise ConflictError(
                f"decide() denied open_infra_pr for {agent}: {decision.rule}",
                decision=decision.to_dict(),
            )
        if decision.outcome == "ask":
            approval = self.store.request_approval(
                project_id=project_id,
                session_id=session_id,
                agent=agent,
                action="open_infra_pr",
                payload={
                    "title": title,
                    "files": [{"path": p, "content": c} for p, c in payload.items()],
                },
                stage=decision.stage,
                rule=decision.rule,
            )
            return ProposalResult("pending", decision, approval_id=approval)
        try:
            if existing is not None:
                result = self._correct_on_branch(existing, payload, agent, decision)
            else:
                result = self._open(
                    project.repo_path,
                    project_id,
                    session_id,
                    pr_action_id,
                    title.strip(),
                    payload,
                    agent,
                    decision,
                )
        except CadenciaError as exc:
            self._failed(pr_action_id, exc, project_id, session_id, agent)
            raise
        if self.auto:
            self.start_gates(pr_action_id)
        return result

    def _open(
        self,
        repo_path: str | None,
        project_id: str,
        session_id: str,
        pr_action_id: str,
        title: str,
        files: dict[str, str],
        agent: str,
        decision: Decision,
    ) -> ProposalResult:
        git = self._git(repo_path)
        git.ensure_repo()
        base = git.create_branch(INFRA_BRANCH, DEFAULT_BRANCH)
        try:
            head = git.commit_files(INFRA_BRANCH, files, f"{title}\n\nInfra PR {pr_action_id}")
        except CadenciaError:
            drop_branch(git.repo_path, INFRA_BRANCH, base)
            raise
        pr = git.open_pull_request(INFRA_BRANCH, title)
        now = utcnow_iso()
        artifact = InfraArtifact(
            pr_action_id=pr_action_id,
            project_id=project_id,
            session_id=session_id,
            title=title,
            branch=INFRA_BRANCH,
            pr_id=pr.id,
            pr_url=pr.url,
            head=head,
            files=tuple(sorted(files)),
            findings=(),
            gate_status="awaiting_qa",
            gate_correction_count=0,
            blocked=False,
            blocked_reason=None,
            created_at=now,
            updated_at=now,
        )
        with self.db.transaction() as tx:
            self.artifacts.insert(tx, artifact, actor=agent)
            event = self._append(
                tx,
                "infra.pr_opened",
                {
                    "pr_action_id": pr_action_id,
                    "branch": INFRA_BRANCH,
                    "paths": sorted(files),
                    "pr_url": pr.url,
                    "gate_status": "awaiting_qa",
                },
                artifact,
                agent,
            )
        self.events.publish([event])
        return ProposalResult("opened", decision, self.artifacts.get(pr_action_id))

    def _correct_on_branch(
        self, art: InfraArtifact, files: dict[str, str], agent: str, decision: Decision
    ) -> ProposalResult:
        move = next_gate_status(art.state, GateEvent.correction_committed(), self.limit)
        number = move.state.correction_count
        git = self._git(self.store.project(art.project_id).repo_path)
        head = git.commit_files(art.branch, files, f"{art.title} (correction {number})")
        paths = sorted(set(art.files) | set(files))
        with self.db.transaction() as tx:
            self.artifacts.transition(
                tx,
                art,
                move.state,
                actor=agent,
                head=head,
                files=paths,
                note=f"correction {number} committed ({head[:10]})",
            )
            events = [
                self._append(
                    tx,
                    "infra.pr_corrected",
                    {
                        "pr_action_id": art.pr_action_id,
                        "paths": sorted(files),
                        "correction": number,
                    },
                    art,
                    agent,
                ),
                *self._change_events(tx, art, move, f"correction {number} committed", agent),
            ]
        self.events.publish(events)
        return ProposalResult("corrected", decision, self.artifacts.get(art.pr_action_id))

    # -- gates -----------------------------------------------------------------------------

    def record_verdict(
        self,
        pr_action_id: str,
        gate: GateName,
        verdict: VerdictValue,
        findings: Sequence[Finding] = (),
        reason: str | None = None,
    ) -> InfraArtifact:
        """Record one gate's verdict through the shared state machine.

        A ``skipped`` verdict stores the findings and the event but moves nothing (a
        missing scanner is never a pass, and does not cost the author a correction).

        Raises:
            ConflictError: the artifact is blocked/final, waits for the other gate, or
                changed concurrently.
        """
        art = self.artifacts.get(pr_action_id)
        stored = [f for f in art.findings if f.get("gate") == "qa"] if gate == "secops" else []
        stored += [{**f, "gate": f.get("gate", gate)} for f in findings]
        if verdict == "skipped":
            skipped = (GateEvent.qa if gate == "qa" else GateEvent.secops)(False, "skipped")
            move = Transition(art.state, art.state, skipped)
            if art.gate_status != f"awaiting_{gate}":
                raise ConflictError(f"{gate} verdict not allowed while {art.gate_status}")
        else:
            event = (GateEvent.qa if gate == "qa" else GateEvent.secops)(verdict == "pass", reason)
            move = next_gate_status(art.state, event, self.limit)
        with self.db.transaction() as tx:
            self.artifacts.transition(
                tx,
                art,
                move.state,
                actor=gate,
                findings=stored,
                note=f"{gate} {verdict}" + (f": {reason}" if reason else ""),
            )
            events = [
                self._append(
                    tx,
                    f"artifact.{gate}_verdict",
                    {
                        "verdict": verdict,
                        "pr_action_id": pr_action_id,
                        "task_id": None,
                        "findings": stored,
                        "gate_status": move.state.status,
                    },
                    art,
                    gate,
                )
            ]
            events += self._change_events(tx, art, move, reason or f"{gate} {verdict}", gate)
        self.events.publish(events)
        return self.artifacts.get(pr_action_id)

    def run_gates(self, pr_action_id: str) -> InfraArtifact:
        """QA on the PR's files at its head, then SecOps after a QA pass.

        Raises:
            ConflictError: the artifact is not waiting for a gate (blocked, final...).
        """
        art = self.artifacts.get(pr_action_id)
        if art.gate_status not in ("awaiting_qa", "awaiting_secops"):
            raise ConflictError(
                f"no gate to run while {art.gate_status}",
                pr_action_id=pr_action_id,
                status=art.gate_status,
            )
        files = self._read(art)
        events = self.store.events
        if art.gate_status == "awaiting_qa":
            with agent_at_work(events, "qa", art.project_id, f"reviewing infra PR {pr_action_id}"):
                result = run_qa(files, self.settings, timeout_s=self.timeout_s)
            art = self._record(pr_action_id, result)
        if art.gate_status == "awaiting_secops":
            with agent_at_work(
                events, "secops", art.project_id, f"scanning infra PR {pr_action_id}"
            ):
                result = run_secops(files, self.settings, timeout_s=self.timeout_s)
            art = self._record(pr_action_id, result)
        return art

    def _record(self, pr_action_id: str, result: GateResult) -> InfraArtifact:
        event = verdict_event(result)
        verdict: VerdictValue = "skipped" if event is None else result.status
        return self.record_verdict(
            pr_action_id,
            result.gate,
            verdict,
            gate_findings(result),
            None if event is None else event.reason,
        )

    def start_gates(self, pr_action_id: str) -> GateJob:
        """Run the gates in the background (with ``auto``, the whole correction loop)."""
        work = self.settle if self.auto else self.run_gates
        return self.jobs.start(pr_action_id, lambda: work(pr_action_id))

    def _record_job_error(self, pr_action_id: str, exc: BaseException) -> None:
        message = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
        try:
            art: InfraArtifact | None = self.artifacts.get(pr_action_id)
        except CadenciaError:
            art = None
        self._emit(
            art,
            "infra.pr_failed",
            {"pr_action_id": pr_action_id, "error": f"gate run failed: {message}"},
            None,
            None,
            "qa",
        )

    # -- the correction loop ---------------------------------------------------------------

    def correct(self, pr_action_id: str, agent: str = INFRA_AGENT) -> ProposalResult:
        """The Infra agent fixes what the findings name and proposes again (same tool path)."""
        art = self.artifacts.get(pr_action_id)
        if art.gate_status != "changes_requested":
            raise ConflictError(f"nothing to correct while {art.gate_status}")
        fixed = planner.correct(self._read(art), [dict(f) for f in art.findings])
        return self.propose_infra_pr(art.project_id, art.session_id, art.title, fixed, agent)

    def settle(self, pr_action_id: str) -> InfraArtifact:
        """Gates → (changes_requested → correct → gates)* until awaiting_human or blocked."""
        art = self.artifacts.get(pr_action_id)
        for _ in range(4 * (self.limit + 2)):
            if art.gate_status in SETTLED:
                return art
            if art.gate_status == "changes_requested":
                self.correct(pr_action_id)
                art = self.artifacts.get(pr_action_id)
            else:
                before = art.state
                art = self.run_gates(pr_action_id)
                if art.state == before:  # a skipped gate: running again will not help
                    return art
        return art

    def run_until_settled(
        self,
        project_id: str,
        session_id: str,
        title: str,
        files: Sequence[Mapping[str, Any]] | Mapping[str, str],
        agent: str = INFRA_AGENT,
    ) -> InfraArtifact:
        """Propose, then :meth:`settle` (the demo and the tests)."""
        result = self.propose_infra_pr(project_id, session_id, title, files, agent)
        if result.artifact is None:
            raise ConflictError(
                f"the proposal is {result.status}, not opened", approval_id=result.approval_id
            )
        if self.auto:
            self.jobs.wait_idle()
            return self.artifacts.get(result.artifact.pr_action_id)
        return self.settle(result.artifact.pr_action_id)

    # -- operator actions ------------------------------------------------------------------

    def approve(self, pr_action_id: str, operator: str, reason: str | None = None) -> InfraArtifact:
        """Merge the PR into ``main`` (only from ``awaiting_human``); one operator wins.

        Raises:
            ConflictError: not awaiting_human, another operator acted first, or the merge
                conflicts (then nothing changes, in git or in the database).
        """
        operator = _required(operator, "operator")
        art = self.artifacts.get(pr_action_id)
        move = next_gate_status(art.state, GateEvent.approve(reason), self.limit)
        git = self._git(self.store.project(art.project_id).repo_path)
        note = f"approved by {operator}" + (f": {reason}" if reason else "")
        with self.db.transaction() as tx:
            # The conditional UPDATE comes first: the loser of a race stops here, before
            # git; a failing merge rolls the row back.
            self.artifacts.transition(tx, art, move.state, actor=operator, note=note)
            git.merge(
                art.branch,
                DEFAULT_BRANCH,
                f"Merge infra PR {pr_action_id}: {art.title}\n\nApproved by {operator}",
            )
            events = self._change_events(tx, art, move, f"approved by {operator}", None)
            merged = {"pr_action_id": pr_action_id, "operator": operator}
            events.append(self._append(tx, "infra.pr_merged", merged, art, None))
        self.events.publish(events)
        return self.artifacts.get(pr_action_id)

    def reject(self, pr_action_id: str, operator: str, reason: str) -> InfraArtifact:
        """Send the PR back to the Infra agent with a reason (required)."""
        reason = _required(reason, "reason")
        finding: Finding = {
            "tool": "operator",
            "rule": "rejected",
            "file": "",
            "line": None,
            "severity": "error",
            "message": reason,
            "gate": "human",
        }
        art = self._operator(pr_action_id, GateEvent.reject(reason), operator, reason, [finding])
        if self.auto and art.gate_status == "changes_requested":
            self.start_gates(pr_action_id)
        return art

    def close(self, pr_action_id: str, operator: str, reason: str | None = None) -> InfraArtifact:
        """Close the PR for good (from any state but merged/closed)."""
        return self._operator(pr_action_id, GateEvent.close(reason), operator, reason)

    def unblock(self, pr_action_id: str, operator: str, reason: str | None = None) -> InfraArtifact:
        """Give a blocked PR a fresh round of corrections (only from ``blocked``)."""
        return self._operator(pr_action_id, GateEvent.unblock(reason), operator, reason)

    def _operator(
        self,
        pr_action_id: str,
        event: GateEvent,
        operator: str,
        reason: str | None,
        findings: list[Finding] | None = None,
    ) -> InfraArtifact:
        operator = _required(operator, "operator")
        art = self.artifacts.get(pr_action_id)
        move = next_gate_status(art.state, event, self.limit)
        note = f"{event.kind} by {operator}" + (f": {reason}" if reason else "")
        with self.db.transaction() as tx:
            self.artifacts.transition(
                tx, art, move.state, actor=operator, note=note, findings=findings
            )
            events = self._change_events(tx, art, move, note, None)
        self.events.publish(events)
        return self.artifacts.get(pr_action_id)

    # -- reads -----------------------------------------------------------------------------

    def get(self, pr_action_id: str) -> InfraArtifact:
        """The artifact (:class:`NotFoundError` when unknown)."""
        return self.artifacts.get(pr_action_id)

    def in_review(self, project_id: str | None = None) -> list[InfraArtifact]:
        """Artifacts not merged or closed (the Approvals tab)."""
        return self.artifacts.list_in_review(project_id)

    def files(self, pr_action_id: str) -> dict[str, Any]:
        """The PR's files at its head and the unified diff against ``main``."""
        art = self.artifacts.get(pr_action_id)
        git = self._git(self.store.project(art.project_id).repo_path)
        contents = git.read_files(art.head, list(art.files))
        return {
            "pr_action_id": pr_action_id,
            "branch": art.branch,
            "head": art.head,
            "base": DEFAULT_BRANCH,
            "files": [{"path": p, "content": c} for p, c in sorted(contents.items())],
            "diff": git.diff(DEFAULT_BRANCH, art.head),
        }

    def findings(self, pr_action_id: str) -> list[Finding]:
        """The latest findings (what the agent is asked to fix)."""
        return [dict(f) for f in self.artifacts.get(pr_action_id).findings]

    def timeline(self, pr_action_id: str) -> list[HistoryEntry]:
        """Every gate move with its actor, oldest first."""
        self.artifacts.get(pr_action_id)
        return self.artifacts.history(pr_action_id)

    def close_jobs(self) -> None:
        """Wait for background gate runs and stop their pool."""
        self.jobs.close()

    # -- internals -------------------------------------------------------------------------

    def _git(self, repo_path: str | None) -> GitProvider:
        if not repo_path:
            raise ValidationError("the project has no repository (repo_path) for PRs")
        return GitProvider(repo_path)

    def _read(self, art: InfraArtifact) -> dict[str, str]:
        git = self._git(self.store.project(art.project_id).repo_path)
        return git.read_files(art.head, list(art.files))

    def _change_events(
        self, tx: Tx, art: InfraArtifact, move: Transition, reason: str, agent: str | None
    ) -> list[Event]:
        if not move.changed_status:
            return []
        events = [
            self._append(
                tx,
                "infra.gate_changed",
                {
                    "pr_action_id": art.pr_action_id,
                    "from_status": move.previous.status,
                    "gate_status": move.state.status,
                    "reason": reason,
                },
                art,
                agent,
            )
        ]
        if move.state.status == "blocked":
            events.append(
                self._append(
                    tx,
                    "infra.artifact_blocked",
                    {"pr_action_id": art.pr_action_id, "reason": move.state.blocked_reason},
                    art,
                    agent,
                )
            )
        return events

    def _append(
        self, tx: Tx, type: str, payload: dict[str, Any], art: InfraArtifact, agent: str | None
    ) -> Event:
        return self.events.append_in(
            tx, type, payload, project_id=art.project_id, session_id=art.session_id, agent=agent
        )

    def _failed(
        self, pr_action_id: str, exc: CadenciaError, project_id: str, session_id: str, agent: str
    ) -> None:
        self._emit(
            None,
            "infra.pr_failed",
            {"pr_action_id": pr_action_id, "error": exc.message},
            project_id,
            session_id,
            agent,
        )

    def _emit(
        self,
        art: InfraArtifact | None,
        type: str,
        payload: dict[str, Any],
        project_id: str | None,
        session_id: str | None,
        agent: str | None,
    ) -> None:
        self.events.append(
            type,
            payload,
            project_id=art.project_id if art else project_id,
            session_id=art.session_id if art else session_id,
            agent=agent,
        )


def _required(value: str | None, what: str) -> str:
    if value is None or not value.strip():
        raise ValidationError(f"{what} is required and must not be empty")
    return value.strip()


__all__ = [
    "INFRA_BRANCH",
    "GateJob",
    "InfraPipeline",
    "ProposalResult",
    "files_payload",
    "gate_findings",
]
