"""The ADR kind's rules (pure): key, branch, file, events that fit their payload models."""

from __future__ import annotations

import pytest

from backend.events import EventType
from backend.events.catalog import check_payload
from backend.exceptions import ValidationError
from backend.gates.state import GateEvent, GateSubjectState, next_gate_status
from backend.prs.kind_adr import AdrRules, adr_name, slugify
from backend.prs.kinds import rules_for
from backend.prs.records import Finding, PullRequest, PullRequests

KEY = "prj_1/adr/0003-conteineres-por-modulo"


def _pr() -> PullRequest:
    return PullRequest.opened(
        id="act_1",
        kind="adr",
        project_id="prj_1",
        author="arquiteto",
        title="Contêineres por módulo",
        branch="adr/0003-conteineres-por-modulo",
        head="h",
        files=["docs/adr/0003-conteineres-por-modulo.md"],
        pr_id="p",
        pr_url="file:///r#pr/p",
        session_id="ses_1",
        task_id=KEY,
    )


def test_the_adr_kind_is_registered_and_names_its_branch_from_its_key() -> None:
    rules = rules_for("adr")
    assert isinstance(rules, AdrRules)
    assert (rules.action, rules.kind) == ("open_adr_pr", "adr")
    assert rules.branch(task_id=KEY) == "adr/0003-conteineres-por-modulo"
    assert adr_name(KEY) == "0003-conteineres-por-modulo"
    with pytest.raises(ValidationError):
        rules.branch(task_id="tsk_1")
    with pytest.raises(ValidationError):
        rules.existing(PullRequests(None), session_id="ses_1", task_id=None)  # type: ignore[arg-type]


def test_slugs_are_ascii_and_never_empty() -> None:
    assert slugify("Contêineres por módulo!") == "conteineres-por-modulo"
    assert slugify("???") == "decision"
    assert len(slugify("a" * 200)) == 48


def test_every_event_fits_its_payload_model() -> None:
    rules = rules_for("adr")
    pr = _pr()
    move = next_gate_status(GateSubjectState("awaiting_qa", 0, None), GateEvent.qa(True), 3)
    emits = [
        *rules.opened(pr),
        rules.changed(pr, move, "qa pass", "qa"),
        *rules.merged(pr, "ana"),
    ]
    failed = [
        rules.proposal_failed("act_1", "boom", "arquiteto"),
        rules.job_failed(pr, "act_1", "x"),
    ]
    emits += [f for f in failed if f is not None]
    assert [e.type for e in emits] == [
        EventType.ADR_PR_OPENED,
        EventType.ADR_GATE_CHANGED,
        EventType.ADR_PR_MERGED,
        EventType.ADR_PR_FAILED,
        EventType.ADR_PR_FAILED,
    ]
    for e in emits:
        check_payload(e.type, e.payload)
    verdict = {
        **rules.verdict_ref(pr),
        "verdict": "pass",
        "findings": [],
        "gate_status": "awaiting_secops",
    }
    check_payload(EventType.ARTIFACT_QA_VERDICT, verdict)
    assert emits[0].payload["adr"] == "0003-conteineres-por-modulo"


def test_the_offline_author_does_not_rewrite_a_decision() -> None:
    files = {"docs/adr/0003-x.md": "# X\n"}

    def rewrite(files: dict[str, str], findings: list[Finding]) -> dict[str, str]:
        return {path: "rewritten\n" for path in files}

    assert rules_for("adr").correct(files, [{"rule": "r", "message": "m"}], rewrite) == files
