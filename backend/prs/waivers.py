"""Reviewed waivers: an operator waives one gate finding on one PR, with a reason.

Only the waiver route writes ``gate_waivers``; nothing in a PR's tree or comments can (the
gate ignores every suppression a PR brings, and a waiver file is just a file). A waiver
names a finding by its id (:func:`backend.gates.findings.fingerprint`), so it keeps
applying to later gate runs of the same PR while the flagged line is unchanged, and to no
other PR. :func:`waive` records it and re-evaluates the PR when nothing else blocks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from backend.events import EventType, utcnow_iso
from backend.exceptions import ConflictError, NotFoundError, ValidationError
from backend.gates.state import GateEvent, Transition, next_gate_status
from backend.prs.kinds import emit, rules_for
from backend.prs.records import PullRequest
from backend.prs.waiver_store import GateWaivers, Waiver, annotate, still_blocking

if TYPE_CHECKING:
    from backend.prs.actions import PrPipeline

REEVALUATED_FROM = frozenset({"changes_requested", "blocked"})


@dataclass(frozen=True)
class WaiverOutcome:
    """What :func:`waive` did."""

    waiver: Waiver
    pr: PullRequest
    reevaluated: bool


def waive(
    pipeline: PrPipeline, pr_id: str, finding_id: str, operator: str, reason: str
) -> WaiverOutcome:
    """Waive the finding ``finding_id`` of PR ``pr_id`` for ``reason``.

    The waiver, a timeline row ("waived by X: reason") and the event ``gate.finding_waived``
    are written in one transaction. When the waived finding was the last one blocking a PR
    sent back by its gates, the PR is re-evaluated: the state machine's ``waived`` move puts
    it back in ``awaiting_qa`` and its gates run again, where the waived findings no longer
    count (:func:`backend.gates.verdicts.verdict_event`).

    Raises:
        ValidationError: no operator or no reason.
        NotFoundError: no such PR, or the PR's latest findings have no such id.
        ConflictError: the PR is merged or closed, the finding is already waived, or the
            PR moved while this ran.
    """
    operator, reason = (operator or "").strip(), (reason or "").strip()
    if not operator or not reason:
        raise ValidationError("a waiver needs an operator and a reason")
    pr = pipeline.prs.get(pr_id)
    if pr.gate_status in ("merged", "closed"):
        raise ConflictError(f"{pr_id} is {pr.gate_status}: nothing to waive", pr_action_id=pr_id)
    finding = next((f for f in pr.findings if f.get("id") == finding_id), None)
    if finding is None:
        raise NotFoundError(
            f"PR {pr_id} has no finding {finding_id!r}", pr_action_id=pr_id, finding=finding_id
        )
    store = GateWaivers(pipeline.db)
    waivers = store.of_pr(pr_id)
    if finding_id in waivers:
        raise ConflictError(f"finding {finding_id} is already {waivers[finding_id].note}")
    line = finding.get("line")
    waiver = Waiver(
        pr_id=pr_id,
        finding=finding_id,
        gate=str(finding.get("gate") or ""),
        tool=str(finding.get("tool") or ""),
        rule=str(finding.get("rule") or ""),
        file=str(finding.get("file") or ""),
        line=line if isinstance(line, int) else None,
        operator=operator,
        reason=reason,
        created_at=utcnow_iso(),
    )
    findings = annotate(pr.findings, {**waivers, finding_id: waiver})
    reevaluate = pr.gate_status in REEVALUATED_FROM and not still_blocking(findings)
    move = (
        next_gate_status(pr.state, GateEvent.waived(reason), pipeline.limit)
        if reevaluate
        else Transition(pr.state, pr.state, GateEvent.waived(reason))
    )
    where = f"{waiver.tool}:{waiver.rule} {waiver.file}" + (f":{line}" if line else "")
    note = f"{waiver.note} ({where})"
    rules = rules_for(pr.kind)
    with pipeline.db.transaction() as tx:
        if not store.insert(tx, waiver):
            raise ConflictError(f"finding {finding_id} was waived meanwhile")
        pipeline.prs.transition(tx, pr, move.state, actor=operator, note=note, findings=findings)
        payload = {
            "pr_id": pr_id,
            "kind": pr.kind,
            "finding": finding_id,
            "gate": waiver.gate,
            "tool": waiver.tool,
            "rule": waiver.rule,
            "file": waiver.file,
            "line": waiver.line,
            "operator": operator,
            "reason": reason,
            "reevaluated": reevaluate,
            "gate_status": move.state.status,
        }
        emits = [emit(EventType.GATE_FINDING_WAIVED, payload, None)]
        emits += pipeline.change_emits(rules, pr, move, note, None)
        events = pipeline.append(tx, pr, emits)
    pipeline.events.publish(events)
    if reevaluate:
        pipeline.start_gates(pr_id)
    return WaiverOutcome(waiver, pipeline.prs.get(pr_id), reevaluate)
