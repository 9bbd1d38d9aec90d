"""The gate state machine: every transition, the correction limit, the conflicts."""

from __future__ import annotations

import pytest

from backend.exceptions import ConflictError
from backend.gates.state import GateEvent, GateSubjectState, next_gate_status


def step(state: GateSubjectState, event: GateEvent, limit: int = 3) -> GateSubjectState:
    return next_gate_status(state, event, limit).state


def test_happy_path_qa_secops_human_merged() -> None:
    s = GateSubjectState()
    assert s.status == "awaiting_qa"
    s = step(s, GateEvent.qa(True))
    assert s.status == "awaiting_secops"
    s = step(s, GateEvent.secops(True))
    assert s.status == "awaiting_human"
    t = next_gate_status(s, GateEvent.approve(), 3)
    assert t.state.status == "merged"
    assert t.changed_status
    assert t.previous.status == "awaiting_human"
    assert t.state.correction_count == 0


@pytest.mark.parametrize(
    ("start", "event"),
    [
        ("awaiting_qa", GateEvent.qa(False)),
        ("awaiting_secops", GateEvent.secops(False)),
        ("awaiting_human", GateEvent.reject("too broad")),
    ],
)
def test_fail_or_reject_requests_changes(start: str, event: GateEvent) -> None:
    s = step(GateSubjectState(status=start), event)  # type: ignore[arg-type]
    assert s.status == "changes_requested"
    assert not s.blocked
    assert s.blocked_reason is None


def test_correction_goes_back_to_qa_and_counts() -> None:
    s = GateSubjectState(status="changes_requested", correction_count=1)
    s = step(s, GateEvent.correction_committed())
    assert s.status == "awaiting_qa"
    assert s.correction_count == 2


def test_third_failing_correction_blocks_with_default_limit() -> None:
    s = GateSubjectState()
    statuses = []
    for _ in range(4):  # original PR + 3 corrections, all failing QA
        s = step(s, GateEvent.qa(False))
        statuses.append(s.status)
        if s.status == "changes_requested":
            s = step(s, GateEvent.correction_committed())
    assert statuses == ["changes_requested", "changes_requested", "changes_requested", "blocked"]
    assert s.blocked
    assert s.correction_count == 3
    assert s.blocked_reason is not None
    assert "3 correction" in s.blocked_reason


def test_limit_is_a_parameter() -> None:
    s = GateSubjectState(status="awaiting_qa", correction_count=1)
    assert step(s, GateEvent.qa(False), limit=1).status == "blocked"
    assert step(s, GateEvent.qa(False), limit=2).status == "changes_requested"


def test_passing_last_correction_is_not_blocked() -> None:
    s = GateSubjectState(status="awaiting_qa", correction_count=3)
    assert step(s, GateEvent.qa(True)).status == "awaiting_secops"


def test_secops_fail_and_reject_at_the_limit_block_too() -> None:
    at_limit = GateSubjectState(status="awaiting_secops", correction_count=3)
    s = step(at_limit, GateEvent.secops(False, "AKIA key"))
    assert s.status == "blocked"
    assert s.blocked_reason is not None
    assert "AKIA key" in s.blocked_reason
    s = step(GateSubjectState(status="awaiting_human", correction_count=3), GateEvent.reject("no"))
    assert s.status == "blocked"


@pytest.mark.parametrize(
    "event",
    [
        GateEvent.qa(True),
        GateEvent.qa(False),
        GateEvent.secops(True),
        GateEvent.secops(False),
        GateEvent.approve(),
        GateEvent.reject("x"),
        GateEvent.correction_committed(),
    ],
)
def test_blocked_rejects_everything_but_unblock_and_close(event: GateEvent) -> None:
    blocked = GateSubjectState(status="blocked", correction_count=3, blocked_reason="r")
    with pytest.raises(ConflictError) as info:
        next_gate_status(blocked, event, 3)
    assert "blocked" in info.value.message


def test_unblock_gives_a_fresh_round() -> None:
    blocked = GateSubjectState(status="blocked", correction_count=3, blocked_reason="r")
    s = step(blocked, GateEvent.unblock("operator looked"))
    assert s == GateSubjectState(
        status="changes_requested", correction_count=0, blocked_reason=None
    )


@pytest.mark.parametrize(
    "start",
    ["awaiting_qa", "awaiting_secops", "awaiting_human", "changes_requested", "blocked"],
)
def test_close_from_any_open_state(start: str) -> None:
    reason = "r" if start == "blocked" else None
    s = step(GateSubjectState(status=start, blocked_reason=reason), GateEvent.close())  # type: ignore[arg-type]
    assert s.status == "closed"
    assert s.blocked_reason is None


@pytest.mark.parametrize("final", ["merged", "closed"])
@pytest.mark.parametrize(
    "event",
    [
        GateEvent.qa(True),
        GateEvent.approve(),
        GateEvent.close(),
        GateEvent.unblock(),
        GateEvent.correction_committed(),
    ],
)
def test_final_states_accept_nothing(final: str, event: GateEvent) -> None:
    with pytest.raises(ConflictError):
        next_gate_status(GateSubjectState(status=final), event, 3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("start", "event"),
    [
        ("awaiting_qa", GateEvent.secops(True)),
        ("awaiting_qa", GateEvent.secops(False)),
        ("awaiting_secops", GateEvent.qa(True)),
        ("awaiting_human", GateEvent.qa(False)),
        ("changes_requested", GateEvent.qa(True)),
        ("changes_requested", GateEvent.secops(False)),
        ("awaiting_qa", GateEvent.approve()),
        ("awaiting_secops", GateEvent.approve()),
        ("changes_requested", GateEvent.approve()),
        ("awaiting_qa", GateEvent.reject("x")),
        ("awaiting_qa", GateEvent.correction_committed()),
        ("awaiting_human", GateEvent.correction_committed()),
        ("awaiting_qa", GateEvent.unblock()),
        ("changes_requested", GateEvent.unblock()),
    ],
)
def test_out_of_turn_events_conflict(start: str, event: GateEvent) -> None:
    state = GateSubjectState(status=start)  # type: ignore[arg-type]
    with pytest.raises(ConflictError) as info:
        next_gate_status(state, event, 3)
    assert info.value.context["status"] == start
    assert info.value.context["event"] == event.kind


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="correction_limit must be at least 1"):
        next_gate_status(GateSubjectState(), GateEvent.qa(True), 0)
    with pytest.raises(ValueError, match="qa_verdict needs passed=True/False"):
        next_gate_status(GateSubjectState(), GateEvent("qa_verdict"), 3)


def test_input_state_is_not_mutated() -> None:
    s = GateSubjectState(status="changes_requested", correction_count=1)
    next_gate_status(s, GateEvent.correction_committed(), 3)
    assert s == GateSubjectState(status="changes_requested", correction_count=1)


def test_a_waiver_re_evaluates_a_pr_sent_back_by_its_gates() -> None:
    back = GateSubjectState("changes_requested", 1)
    moved = next_gate_status(back, GateEvent.waived("demo account"), 3)
    assert moved.state == GateSubjectState("awaiting_qa", 1)  # no correction granted
    blocked = GateSubjectState("blocked", 3, "secops gate failed")
    assert next_gate_status(blocked, GateEvent.waived(), 3).state == GateSubjectState(
        "awaiting_qa", 3
    )
    for status in ("awaiting_qa", "awaiting_human", "merged"):
        with pytest.raises(ConflictError):
            next_gate_status(GateSubjectState(status), GateEvent.waived(), 3)  # type: ignore[arg-type]
