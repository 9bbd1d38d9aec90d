"""The per-kind PR rules (pure): branches, the keys that name a PR, and the kind's events."""

from __future__ import annotations

import pytest

from backend.exceptions import ValidationError
from backend.gates.state import GateEvent, GateSubjectState, next_gate_status
from backend.prs.kinds import INFRA_BRANCH, rules_for
from backend.prs.records import Finding, PrKind, PullRequest


def _pr(kind: PrKind) -> PullRequest:
    return PullRequest.opened(
        id="act_1",
        kind=kind,
        project_id="prj_1",
        author="infra" if kind == "infra" else "dev-worker",
        title="Docs",
        branch="b",
        head="h",
        files=["b.md", "a.md"],
        pr_id="p",
        pr_url="file:///r#pr/p",
        session_id="ses_1" if kind == "infra" else None,
        task_id="tsk_1" if kind == "dev" else None,
    )


def test_branches_follow_adr_0014() -> None:
    assert rules_for("infra").branch(task_id=None) == INFRA_BRANCH
    assert rules_for("dev").branch(task_id="tsk_9") == "feature/task-tsk_9"
    with pytest.raises(ValidationError):
        rules_for("dev").branch(task_id=None)


def test_a_later_sessions_infra_pr_gets_a_branch_of_its_own() -> None:
    infra, dev = rules_for("infra"), rules_for("dev")
    free, taken = (lambda _: False), (lambda b: b == INFRA_BRANCH)
    assert infra.branch_for(task_id=None, session_id="ses_2", taken=free) == INFRA_BRANCH
    assert (
        infra.branch_for(task_id=None, session_id="ses_2", taken=taken) == f"{INFRA_BRANCH}-ses_2"
    )
    with pytest.raises(ValidationError):
        infra.branch_for(task_id=None, session_id=None, taken=taken)
    # A dev PR's branch is its task's, whatever exists (one PR per task).
    assert dev.branch_for(task_id="tsk_9", session_id=None, taken=lambda _: True) == (
        "feature/task-tsk_9"
    )
    # A dev agent on a model corrects its own PR with its proposing tool (issue 13).
    assert (infra.author_tool, dev.author_tool) == ("propose_infra_pr", "propose_task_pr")


def test_infra_prs_are_named_by_pr_action_id_and_dev_prs_by_task_id() -> None:
    infra, dev = rules_for("infra"), rules_for("dev")
    assert infra.verdict_ref(_pr("infra")) == {"pr_action_id": "act_1", "task_id": None}
    assert dev.verdict_ref(_pr("dev")) == {"task_id": "tsk_1"}  # no pr_action_id key
    assert [e.type for e in infra.opened(_pr("infra"))] == ["infra.pr_opened"]
    assert infra.opened(_pr("infra"))[0].payload["paths"] == ["a.md", "b.md"]
    started, opened = dev.opened(_pr("dev"))
    assert (started.type, started.payload["module"]) == ("dev.task_started", "worker")
    assert (opened.type, opened.payload["from_status"]) == ("pr.gate_changed", None)


@pytest.mark.parametrize(
    ("kind", "status", "types"),
    [
        ("infra", "awaiting_human", ["infra.gate_changed"]),
        ("infra", "blocked", ["infra.gate_changed", "infra.artifact_blocked"]),
        ("dev", "awaiting_human", ["pr.gate_changed", "dev.task_done"]),
        ("dev", "blocked", ["pr.gate_changed", "backlog.task_blocked"]),
    ],
)
def test_a_move_emits_the_kinds_events(kind: PrKind, status: str, types: list[str]) -> None:
    rules = rules_for(kind)
    pr = _pr(kind)
    if status == "awaiting_human":
        move = next_gate_status(GateSubjectState("awaiting_secops"), GateEvent.secops(True))
    else:
        move = next_gate_status(GateSubjectState("awaiting_qa", 3), GateEvent.qa(False), 3)
    assert move.state.status == status
    emits = [rules.changed(pr, move, "why", "qa"), *rules.reached(pr, move)]
    assert [e.type for e in emits] == types
    assert emits[0].payload["gate_status"] == status


def test_only_infra_reports_merges_and_failed_proposals() -> None:
    assert [e.type for e in rules_for("infra").merged(_pr("infra"), "ana")] == ["infra.pr_merged"]
    assert rules_for("dev").merged(_pr("dev"), "ana") == []
    assert rules_for("dev").proposal_failed("act_1", "boom", "dev-worker") is None
    failed = rules_for("dev").job_failed(_pr("dev"), "act_1", "boom")
    assert failed is not None
    assert (failed.type, failed.payload["task_id"]) == ("backlog.task_blocked", "tsk_1")


def test_a_kind_without_a_flow_is_refused() -> None:
    # Every PrKind has a flow since the adr kind (issue 12); anything else is refused.
    with pytest.raises(ValidationError, match="wiki"):
        rules_for("wiki")  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["infra", "dev"])
def test_the_offline_author_corrects_with_the_fixer_it_is_given(kind: PrKind) -> None:
    seen: list[list[Finding]] = []

    def fixer(files: dict[str, str], findings: list[Finding]) -> dict[str, str]:
        seen.append(findings)
        findings[0]["rule"] = "changed by the fixer"
        return {path: f"fixed {text}" for path, text in files.items()}

    finding: Finding = {"rule": "DL3007", "file": "Dockerfile"}
    fixed = rules_for(kind).correct({"Dockerfile": "FROM x\n"}, [finding], fixer)
    assert fixed == {"Dockerfile": "fixed FROM x\n"}
    assert seen == [[{"rule": "changed by the fixer", "file": "Dockerfile"}]]
    assert finding == {"rule": "DL3007", "file": "Dockerfile"}  # the PR's own findings stay
