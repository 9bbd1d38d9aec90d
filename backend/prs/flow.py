"""One "PR through the gates" flow for every kind of PR (ADR 0014 decisions 3 and 4).

:meth:`PrFlow.propose` goes through :func:`decide`: a kind's first proposal opens the PR in
``awaiting_qa``, a later one for the same PR is a correction on the same branch.
:meth:`PrFlow.run_gates` runs QA then SecOps deterministically, each verdict through the
shared state machine; :meth:`PrFlow.start_gates` enqueues it as a job. :class:`PrFlow`
gives the rules. The operator actions live in :class:`backend.prs.actions.PrPipeline`;
what differs per kind lives in :mod:`backend.prs.kinds`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import backend.prs.kind_adr  # noqa: F401  (the adr kind registers itself in RULES)
from backend.agents.policy import Decision, decide
from backend.agents.store import TeamStore, new_id
from backend.events import Event, EventType
from backend.exceptions import CadenciaError, ConflictError, ValidationError
from backend.gates.runner import GateResult, run_qa, run_secops
from backend.gates.scanners._base import DEFAULT_TIMEOUT_S
from backend.gates.state import GateEvent, Transition, next_gate_status
from backend.gates.verdicts import verdict_event
from backend.jobs import Backoff, Job, Jobs
from backend.planner import correct
from backend.prs.authoring import CorrectionAuthor
from backend.prs.correcting import Corrections
from backend.prs.gating import (
    IN_GATE,
    agent_at_work,
    drop_branch,
    gate_findings,
    report_job_failure,
)
from backend.prs.git import GitProvider
from backend.prs.kinds import Emit, Fixer, KindRules, emit, rules_for
from backend.prs.proposals import GateName, Proposal, ProposalResult, VerdictValue
from backend.prs.records import Finding, PullRequest, PullRequests
from backend.prs.waiver_store import GateWaivers, annotate
from backend.settings import Settings, load_settings
from backend.store.db import Tx

GATES = "gates"
"""The job kind that runs a PR's gates (payload ``{"pr_id"}``)."""


def gates_key(pr_id: str) -> str:
    """The unique key of a PR's gate job: one at a time per PR."""
    return f"gates:{pr_id}"


class PrFlow:
    """Proposals, gates and corrections of every PR over the team store, git and the gates.

    :meth:`propose` goes through :func:`decide`; a kind's first proposal creates its branch
    from ``main``, commits every file in ONE commit, opens the PR and inserts it in
    ``awaiting_qa``. A later proposal for the same PR (the same session's infra PR, the same
    task's dev PR) is a correction: one more commit on the SAME branch and PR, no new row —
    unless its files are identical to the PR's head, which is refused as "no change" (not
    committed, not counted). A second session's infra PR gets a branch of its own.

    :meth:`run_gates` is deterministic: QA on the files read back from git at the recorded
    head, then SecOps only after a QA pass. Each verdict goes through the shared state
    machine (:func:`next_gate_status`) and a conditional UPDATE, with its events in the same
    transaction. :meth:`start_gates` enqueues a ``gates`` job on the job engine
    (:mod:`backend.jobs`); with ``auto`` the job runs the whole correction loop
    (:meth:`settle`, in :mod:`backend.prs.correcting`).

    Args:
        store: projects, sessions, autonomy, approvals, and the event log.
        settings: ``gate_correction_limit``, ``semgrep_bin``, ``data_dir``.
        permissions: ``permissions.json`` for :func:`decide` (default: the data dir's file).
        auto: start the gates after every proposal and let the author correct on its own
            (the server); tests drive each step explicitly instead.
        timeout_s: limit for each scanner subprocess.
        author: runs a model-backed author's correction turn (see
            :mod:`backend.prs.authoring`); without one, the rule-based fixer corrects.
        fixer: that rule-based fixer, handed to the PR's kind (the planner's ``correct``).
        jobs: the job engine that runs gate jobs (the backend's; by default one of its own
            on the same database, which :meth:`wait_gates` drains in the caller's thread).
    """

    def __init__(
        self,
        store: TeamStore,
        settings: Settings | None = None,
        *,
        permissions: Any = None,
        auto: bool = False,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        author: CorrectionAuthor | None = None,
        fixer: Fixer = correct,
        jobs: Jobs | None = None,
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
        self.author = author
        self.corrections = Corrections(self)
        self.fixer = fixer
        self.prs = PullRequests(self.db)
        self.jobs = jobs if jobs is not None else Jobs(self.db)
        self.jobs.register(
            GATES,
            self._job_work,
            concurrency=2,
            max_attempts=self.settings.gate_max_attempts,
            backoff=Backoff(base_s=2.0, max_s=60.0),
            lease_s=self.settings.gate_lease_s,
            on_dead=self._job_dead,
        )

    @property
    def limit(self) -> int:
        """Corrections allowed before a failure blocks (``gate_correction_limit``)."""
        return self.settings.gate_correction_limit

    # -- proposals -------------------------------------------------------------------------

    def propose(self, proposal: Proposal, *, approval_id: str | None = None) -> ProposalResult:
        """Open the proposal's PR, or commit a correction on it, through ``decide()``.

        ``approval_id`` names the operator's approval of this very proposal: it answers a
        ``decide()`` ask (no second approval is created); a deny still denies.

        Returns:
            ``opened``, ``corrected``, ``pending`` (``decide()`` asked), or ``unchanged``: a
            correction whose files are already at the PR's head, refused before ``decide()``
            (recorded as "no change"; no commit, no count, no gate run).

        Raises:
            ValidationError: a project without a repository.
            PathError: a path that could escape the repository; nothing is written.
            ConflictError: ``decide()`` denied the action, the PR is not in
                ``changes_requested`` for a correction.
        """
        rules = rules_for(proposal.kind)
        existing = rules.existing(
            self.prs, session_id=proposal.session_id, task_id=proposal.task_id
        )
        pr_id = existing.id if existing else new_id("act")
        if existing is not None and self._same_as_head(existing, proposal.files):
            # Nothing to decide, commit or count: the author is told, the PR stays put.
            note = "the proposed files are identical to the PR's head"
            return ProposalResult(
                "unchanged", None, self.no_change(existing, proposal.author, note)
            )
        decision = decide(
            proposal.author,
            rules.action,
            autonomy=self.store.autonomy(proposal.project_id),
            permissions=self.permissions,
        )
        if decision.outcome == "ask" and approval_id is not None:
            rule = f"approved in {approval_id} ({decision.rule})"
            decision = Decision("allow", decision.stage, rule)
        self.events.append(
            EventType.ACTION_DECIDED,
            {"action": rules.action, **decision.to_dict()},
            project_id=proposal.project_id,
            session_id=proposal.session_id,
            agent=proposal.author,
        )
        if decision.outcome == "deny":
            raise ConflictError(
                f"decide() denied {rules.action} for {proposal.author}: {decision.rule}",
                decision=decision.to_dict(),
            )
        if decision.outcome == "ask":
            approval = self.store.request_approval(
                project_id=proposal.project_id,
                session_id=proposal.session_id,
                agent=proposal.author,
                action=rules.action,
                payload=rules.approval_payload(proposal.title, proposal.files, proposal.task_id),
                stage=decision.stage,
                rule=decision.rule,
            )
            return ProposalResult("pending", decision, approval_id=approval)
        try:
            if existing is not None:
                pr = self._commit_correction(rules, existing, proposal)
                result = ProposalResult("corrected", decision, pr)
            else:
                result = ProposalResult("opened", decision, self._open(rules, pr_id, proposal))
        except CadenciaError as exc:
            self.report_failure(proposal, pr_id, exc)
            raise
        if self.auto:
            self.start_gates(pr_id)
        return result

    def report_failure(self, proposal: Proposal, pr_id: str, exc: CadenciaError) -> None:
        """Record a proposal that failed, as its kind reports it (if it does)."""
        failure = rules_for(proposal.kind).proposal_failed(pr_id, exc.message, proposal.author)
        if failure is not None:
            self.events.append(
                failure.type,
                failure.payload,
                project_id=proposal.project_id,
                session_id=proposal.session_id,
                agent=failure.agent,
            )

    def _open(self, rules: KindRules, pr_id: str, proposal: Proposal) -> PullRequest:
        git = self.git(proposal.project_id)
        git.ensure_repo()
        branch, base = rules.create_branch(
            git, task_id=proposal.task_id, session_id=proposal.session_id
        )
        message = rules.commit_message(pr_id, proposal.title, proposal.task_id)
        try:
            head = git.commit_files(branch, proposal.files, message)
            ref = git.open_pull_request(branch, proposal.title)
        except CadenciaError:
            drop_branch(git.repo_path, branch, base)
            raise
        pr = PullRequest.opened(
            id=pr_id,
            kind=rules.kind,
            project_id=proposal.project_id,
            session_id=proposal.session_id,
            task_id=proposal.task_id,
            author=proposal.author,
            title=proposal.title,
            branch=branch,
            head=head,
            files=list(proposal.files),
            pr_id=ref.id,
            pr_url=ref.url,
        )
        with self.db.transaction() as tx:
            self.prs.insert(tx, pr, actor=proposal.author)
            events = self.append(tx, pr, rules.opened(pr))
        self.events.publish(events)
        return self.prs.get(pr_id)

    def _commit_correction(
        self, rules: KindRules, pr: PullRequest, proposal: Proposal
    ) -> PullRequest:
        move = next_gate_status(pr.state, GateEvent.correction_committed(), self.limit)
        number = move.state.correction_count
        git = self.git(pr.project_id)
        head = git.commit_files(pr.branch, proposal.files, f"{pr.title} (correction {number})")
        with self.db.transaction() as tx:
            self.prs.transition(
                tx,
                pr,
                move.state,
                actor=proposal.author,
                head=head,
                files=sorted(set(pr.files) | set(proposal.files)),
                note=f"correction {number} committed ({head[:10]})",
            )
            emits = rules.corrected(pr, sorted(proposal.files), number)
            emits += self.change_emits(rules, pr, move, "correction committed", proposal.author)
            events = self.append(tx, pr, emits)
        self.events.publish(events)
        return self.prs.get(pr.id)

    # -- gates -----------------------------------------------------------------------------

    def record_verdict(
        self,
        pr_id: str,
        gate: GateName,
        verdict: VerdictValue,
        findings: Sequence[Finding] = (),
        reason: str | None = None,
    ) -> PullRequest:
        """Record one gate's verdict through the shared state machine.

        A ``skipped`` verdict stores the findings and the event but moves nothing (a
        missing scanner is never a pass, and does not cost the author a correction).

        Raises:
            ConflictError: the PR is blocked/final, waits for the other gate, or changed
                concurrently.
        """
        pr = self.prs.get(pr_id)
        rules = rules_for(pr.kind)
        stored = [f for f in pr.findings if f.get("gate") == "qa"] if gate == "secops" else []
        stored += [{**f, "gate": f.get("gate", gate)} for f in findings]
        make = GateEvent.qa if gate == "qa" else GateEvent.secops
        if verdict == "skipped":
            if pr.gate_status != f"awaiting_{gate}":
                raise ConflictError(f"{gate} verdict not allowed while {pr.gate_status}")
            move = Transition(pr.state, pr.state, make(False, "skipped"))
        else:
            move = next_gate_status(pr.state, make(verdict == "pass", reason), self.limit)
        with self.db.transaction() as tx:
            self.prs.transition(
                tx,
                pr,
                move.state,
                actor=gate,
                findings=stored,
                note=f"{gate} {verdict}" + (f": {reason}" if reason else ""),
            )
            payload = {
                "verdict": verdict,
                **rules.verdict_ref(pr),
                "findings": stored,
                "gate_status": move.state.status,
            }
            verdict_type = (
                EventType.ARTIFACT_QA_VERDICT if gate == "qa" else EventType.ARTIFACT_SECOPS_VERDICT
            )
            emits = [emit(verdict_type, payload, gate)]
            emits += self.change_emits(rules, pr, move, reason or f"{gate} {verdict}", gate)
            events = self.append(tx, pr, emits)
        self.events.publish(events)
        return self.prs.get(pr_id)

    def run_gates(self, pr_id: str) -> PullRequest:
        """QA on the PR's files at its head, then SecOps after a QA pass.

        Raises:
            ConflictError: the PR is not waiting for a gate (blocked, final...).
        """
        pr = self.prs.get(pr_id)
        if pr.gate_status not in ("awaiting_qa", "awaiting_secops"):
            raise ConflictError(
                f"no gate to run while {pr.gate_status}", pr_action_id=pr_id, status=pr.gate_status
            )
        files = self.read(pr)
        label = rules_for(pr.kind).label(pr)
        if pr.gate_status == "awaiting_qa":
            with agent_at_work(self.events, "qa", pr.project_id, f"reviewing {label}"):
                result = run_qa(files, self.settings, timeout_s=self.timeout_s)
            pr = self._record(pr_id, result)
        if pr.gate_status == "awaiting_secops":
            with agent_at_work(self.events, "secops", pr.project_id, f"scanning {label}"):
                result = run_secops(files, self.settings, timeout_s=self.timeout_s)
            pr = self._record(pr_id, result)
        return pr

    def _record(self, pr_id: str, result: GateResult) -> PullRequest:
        waivers = GateWaivers(self.db).of_pr(pr_id)  # an operator's, never the PR's own
        event = verdict_event(result, waivers.keys())
        verdict: VerdictValue = "skipped" if event is None else "pass" if event.passed else "fail"
        return self.record_verdict(
            pr_id,
            result.gate,
            verdict,
            annotate(gate_findings(result), waivers),
            None if event is None else event.reason,
        )

    # -- corrections (a collaborator: backend.prs.correcting) ------------------------------

    def correct(self, pr_id: str) -> ProposalResult:
        """The author corrects the PR on the same branch (see :meth:`Corrections.correct`)."""
        return self.corrections.correct(pr_id)

    def settle(self, pr_id: str) -> PullRequest:
        """Gates and corrections until the PR settles (see :meth:`Corrections.settle`)."""
        return self.corrections.settle(pr_id)

    def no_change(self, pr: PullRequest, author: str, detail: str) -> PullRequest:
        """Record a correction with no diff (see :meth:`Corrections.no_change`)."""
        return self.corrections.no_change(pr, author, detail)

    def _same_as_head(self, pr: PullRequest, files: dict[str, str]) -> bool:
        return self.corrections.same_as_head(pr, files)

    def start_gates(self, pr_id: str) -> int:
        """Enqueue the PR's ``gates`` job (with ``auto``, the whole correction loop); its id.

        One job per PR at a time: asked while it runs, it runs once more after. A process
        that dies mid-run leaves the job to another worker once its lease lapses.
        """
        job_id, _ = self.jobs.enqueue(
            GATES, {"pr_id": pr_id}, unique_key=gates_key(pr_id), again=True
        )
        return job_id

    def wait_gates(self, timeout: float | None = None) -> None:
        """Wait until no gate job is left: the workers' (a started engine), else run them
        here in this thread (commands and tests run no workers)."""
        if self.jobs.started:
            self.jobs.wait_idle(GATES, timeout)
        else:
            self.jobs.drain(GATES)

    def _job_work(self, job: Job) -> None:
        pr = self.prs.get(str(job.payload["pr_id"]))
        if pr.gate_status in IN_GATE or (self.auto and pr.gate_status == "changes_requested"):
            self.settle(pr.id) if self.auto else self.run_gates(pr.id)
        # else a run that died after its last verdict was recorded: nothing is left

    def _job_dead(self, job: Job) -> None:
        """A gate job out of attempts: the PR's feed says so (the inbox lists the job)."""
        pr_id = str(job.payload.get("pr_id", ""))
        report_job_failure(self.prs, self.events, pr_id, job.last_error or "out of attempts")

    def settle_now(self, pr_id: str) -> PullRequest:
        """Settle and wait: through the gate job when ``auto`` (the workers run it)."""
        if not self.auto:
            return self.settle(pr_id)
        job = self.jobs.wait(self.start_gates(pr_id))
        if job.state == "dead":
            raise ConflictError(job.last_error or "the gate job failed", pr_action_id=pr_id)
        return self.prs.get(pr_id)

    # -- shared internals ------------------------------------------------------------------

    def git(self, project_id: str) -> GitProvider:
        """The git provider of the project's repository."""
        repo_path = self.store.project(project_id).repo_path
        if not repo_path:
            raise ValidationError(f"project {project_id} has no repository (repo_path) for PRs")
        return GitProvider(repo_path)

    def read(self, pr: PullRequest) -> dict[str, str]:
        """The PR's files at its head."""
        return self.git(pr.project_id).read_files(pr.head, list(pr.files))

    def change_emits(
        self, rules: KindRules, pr: PullRequest, move: Transition, reason: str, agent: str | None
    ) -> list[Emit]:
        """The events of a move: ``<kind>.gate_changed`` plus what the kind adds."""
        if not move.changed_status:
            return []
        return [rules.changed(pr, move, reason, agent), *rules.reached(pr, move)]

    def append(self, tx: Tx, pr: PullRequest, emits: Sequence[Emit]) -> list[Event]:
        """Append ``emits`` for ``pr`` inside ``tx`` (published after the commit)."""
        return [
            self.events.append_in(
                tx,
                e.type,
                e.payload,
                project_id=pr.project_id,
                session_id=pr.session_id,
                agent=e.agent,
            )
            for e in emits
        ]
