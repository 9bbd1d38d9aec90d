"""The gate state machine shared by dev task PRs and infra artifacts.

Pure: a state and an event in, a :class:`Transition` out, no I/O. The store layer
persists ``GateSubjectState`` (columns ``gate_status``, ``gate_correction_count``,
``blocked``, ``blocked_reason``) and calls :func:`next_gate_status` (its docstring lists
the rules) inside its transaction, so every caller (dev tasks, infra artifacts, the HTTP
API) obeys one set of rules.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from backend.exceptions import ConflictError

GateName = Literal["qa", "secops"]
"""The two automated gates, in the order a PR meets them."""

GateStatus = Literal[
    "awaiting_qa",
    "awaiting_secops",
    "awaiting_human",
    "changes_requested",
    "merged",
    "closed",
    "blocked",
]
GATE_STATUSES: tuple[GateStatus, ...] = (
    "awaiting_qa",
    "awaiting_secops",
    "awaiting_human",
    "changes_requested",
    "merged",
    "closed",
    "blocked",
)
TERMINAL_STATUSES: frozenset[GateStatus] = frozenset({"merged", "closed"})

EventKind = Literal[
    "qa_verdict",
    "secops_verdict",
    "approve",
    "reject",
    "close",
    "unblock",
    "correction_committed",
    "waived",
]


@dataclass(frozen=True)
class GateSubjectState:
    """What the store keeps about one gated PR (a dev task or an infra artifact).

    Attributes:
        status: where the PR stands in the gate flow.
        correction_count: corrections committed so far on the same branch/PR.
        blocked_reason: why it is blocked; ``None`` unless ``status == "blocked"``.
    """

    status: GateStatus = "awaiting_qa"
    correction_count: int = 0
    blocked_reason: str | None = None

    @property
    def blocked(self) -> bool:
        """The ``blocked`` column: true only in the ``blocked`` state."""
        return self.status == "blocked"


@dataclass(frozen=True)
class GateEvent:
    """Something that happened to a gated PR.

    Build one with the class methods (``GateEvent.qa(passed=False)``,
    ``GateEvent.approve()``...) rather than by hand.

    Attributes:
        kind: what happened.
        passed: the verdict of a ``qa_verdict`` / ``secops_verdict``; ``None`` otherwise.
        reason: free text from the operator or the gate (kept in ``blocked_reason``).
    """

    kind: EventKind
    passed: bool | None = None
    reason: str | None = None

    @classmethod
    def qa(cls, passed: bool, reason: str | None = None) -> GateEvent:
        """The QA gate's verdict."""
        return cls("qa_verdict", passed=passed, reason=reason)

    @classmethod
    def secops(cls, passed: bool, reason: str | None = None) -> GateEvent:
        """The SecOps gate's verdict."""
        return cls("secops_verdict", passed=passed, reason=reason)

    @classmethod
    def approve(cls, reason: str | None = None) -> GateEvent:
        """An operator approves the PR (merge)."""
        return cls("approve", reason=reason)

    @classmethod
    def reject(cls, reason: str | None = None) -> GateEvent:
        """An operator sends the PR back to its author."""
        return cls("reject", reason=reason)

    @classmethod
    def close(cls, reason: str | None = None) -> GateEvent:
        """An operator closes the PR for good."""
        return cls("close", reason=reason)

    @classmethod
    def unblock(cls, reason: str | None = None) -> GateEvent:
        """An operator gives a blocked PR a fresh round of corrections."""
        return cls("unblock", reason=reason)

    @classmethod
    def correction_committed(cls) -> GateEvent:
        """The author committed a correction on the same branch/PR."""
        return cls("correction_committed")

    @classmethod
    def waived(cls, reason: str | None = None) -> GateEvent:
        """An operator waived every finding that still blocked the PR: re-evaluate it."""
        return cls("waived", reason=reason)


@dataclass(frozen=True)
class Transition:
    """The outcome of applying one event.

    Attributes:
        previous: the state before the event.
        state: the state after it.
        event: the event applied.
    """

    previous: GateSubjectState
    state: GateSubjectState
    event: GateEvent

    @property
    def changed_status(self) -> bool:
        """True when ``gate_status`` moved (worth an ``infra.gate_changed`` event)."""
        return self.previous.status != self.state.status


_NEXT_ON_PASS: dict[EventKind, tuple[GateStatus, GateStatus]] = {
    "qa_verdict": ("awaiting_qa", "awaiting_secops"),
    "secops_verdict": ("awaiting_secops", "awaiting_human"),
}


def next_gate_status(
    current: GateSubjectState, event: GateEvent, correction_limit: int = 3
) -> Transition:
    """Apply ``event`` to ``current`` under the rules below.

    Args:
        current: the subject's state as stored.
        event: what happened.
        correction_limit: corrections allowed before a failure blocks
            (``Settings.gate_correction_limit``).

    Returns:
        The transition; ``transition.state`` is what to store.

    Raises:
        ConflictError: the event is not allowed in the current state (a verdict for a
            blocked subject or for the other gate, approve outside ``awaiting_human``,
            anything on a merged/closed subject...).
        ValueError: ``correction_limit`` is below 1 or a verdict has no ``passed``.

    Rules::

        awaiting_qa --qa pass--> awaiting_secops --secops pass--> awaiting_human --approve--> merged
        awaiting_qa / awaiting_secops --gate fail--> changes_requested (or blocked, see below)
        awaiting_human --reject--> changes_requested (or blocked)
        changes_requested --correction_committed--> awaiting_qa   (correction_count + 1)
        blocked --unblock--> changes_requested                    (correction_count reset to 0)
        changes_requested / blocked --waived--> awaiting_qa       (count kept: re-evaluated)
        any state but merged/closed --close--> closed

    ``correction_count`` is the number of corrections the author has committed on the PR
    (the original PR is attempt 0). A failing verdict or an operator reject when
    ``correction_count >= correction_limit`` blocks the subject: with the default limit 3 the
    original PR and the first two corrections may fail and go back to ``changes_requested``;
    the third correction that still fails is ``blocked``. ``blocked`` rejects every verdict
    with :class:`ConflictError`; only an operator ``unblock`` (a fresh round of corrections)
    or ``close`` leaves it. ``merged`` and ``closed`` are terminal.

    ``waived``: an operator waived the last blocking findings of a failed PR; its gates run
    again on the same head. It costs the author nothing and grants no correction: a blocked
    PR that fails again is blocked again.
    """
    if correction_limit < 1:
        raise ValueError("correction_limit must be at least 1")
    status = current.status
    kind = event.kind

    def conflict(why: str) -> ConflictError:
        return ConflictError(
            f"{kind} not allowed while {status}: {why}",
            status=status,
            event=kind,
        )

    def to(new: GateSubjectState) -> Transition:
        return Transition(previous=current, state=new, event=event)

    if status in TERMINAL_STATUSES:
        raise conflict("the PR is already final")

    if kind == "close":
        return to(replace(current, status="closed", blocked_reason=None))

    if kind == "waived":
        if status not in ("changes_requested", "blocked"):
            raise conflict("only a PR sent back by its gates is re-evaluated after a waiver")
        return to(replace(current, status="awaiting_qa", blocked_reason=None))

    if status == "blocked":
        if kind == "unblock":
            return to(GateSubjectState(status="changes_requested", correction_count=0))
        raise conflict(f"blocked ({current.blocked_reason}); only unblock or close")

    if kind in _NEXT_ON_PASS:
        expected, on_pass = _NEXT_ON_PASS[kind]
        if event.passed is None:
            raise ValueError(f"{kind} needs passed=True/False")
        if status != expected:
            raise conflict(f"this verdict belongs to {expected}")
        if event.passed:
            return to(replace(current, status=on_pass))
        return to(
            _send_back(
                current, f"{kind.removesuffix('_verdict')} gate failed", correction_limit, event
            )
        )

    if kind == "approve":
        if status != "awaiting_human":
            raise conflict("only a PR awaiting_human can be approved")
        return to(replace(current, status="merged"))

    if kind == "reject":
        if status != "awaiting_human":
            raise conflict("only a PR awaiting_human can be rejected")
        return to(_send_back(current, "rejected by operator", correction_limit, event))

    if kind == "correction_committed":
        if status != "changes_requested":
            raise conflict("corrections answer changes_requested")
        return to(
            replace(current, status="awaiting_qa", correction_count=current.correction_count + 1)
        )

    if kind == "unblock":
        raise conflict("the PR is not blocked")
    raise conflict("unknown event")  # pragma: no cover - EventKind is closed


def _send_back(
    current: GateSubjectState, what: str, limit: int, event: GateEvent
) -> GateSubjectState:
    """A failure: back to the author, or blocked once the corrections are used up."""
    if current.correction_count >= limit:
        detail = f": {event.reason}" if event.reason else ""
        reason = f"{what} after {current.correction_count} correction(s) (limit {limit}){detail}"
        return replace(current, status="blocked", blocked_reason=reason)
    return replace(current, status="changes_requested", blocked_reason=None)
