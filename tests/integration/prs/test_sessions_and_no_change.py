"""One infra PR cycle per session (ADR 0014): a later session opens its own PR on its own
branch, and merges after the first; and a proposal with no diff is never a correction."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_pipeline_support import BRANCH, CLEAN_FILES, World, make_world

from backend.exceptions import ConflictError
from backend.prs.pipeline import InfraPipeline
from backend.store.db import Database

FAIL = [{"tool": "hadolint", "rule": "DL3007", "file": "Dockerfile", "line": 1,
         "severity": "warning", "message": "Using latest is prone to errors"}]  # fmt: skip


@pytest.fixture
def world(any_db: Database, tmp_path: Path) -> World:
    return make_world(any_db, tmp_path)


def _second_session(world: World) -> str:
    session = world.store.create_session(world.project.id, "infra again")["id"]
    handoff = world.store.offer_handoff(world.project.id, session, "arquiteto", "infra")
    world.store.accept_handoff(handoff.id, "alice")
    return str(session)


def _to_human(pipeline: InfraPipeline, pr: str) -> None:
    pipeline.record_verdict(pr, "qa", "pass")
    pipeline.record_verdict(pr, "secops", "pass")


def test_two_sessions_each_open_their_pr_and_the_second_merges_after_the_first(
    world: World,
) -> None:
    first = world.propose().artifact
    assert first.branch == BRANCH
    _to_human(world.pipeline, first.pr_action_id)
    world.pipeline.approve(first.pr_action_id, "alice")
    session = _second_session(world)

    files = {**CLEAN_FILES, "docs/infra.md": "# Infra\n\nsecond session\n"}
    second = world.pipeline.propose_infra_pr(
        world.project.id,
        session,
        "Infra, again",
        [{"path": p, "content": c} for p, c in files.items()],
    ).artifact

    assert second.pr_action_id != first.pr_action_id
    assert second.branch == f"{BRANCH}-{session}"
    assert world.commits_on_branch(second.branch) == 1
    _to_human(world.pipeline, second.pr_action_id)
    merged = world.pipeline.approve(second.pr_action_id, "alice")
    assert merged.gate_status == "merged"
    assert "second session" in world.git("show", "main:docs/infra.md")
    opened = [e.payload["branch"] for e in world.of_type("infra.pr_opened")]
    assert opened == [BRANCH, f"{BRANCH}-{session}"]


def test_the_first_sessions_corrections_stay_on_its_branch(world: World) -> None:
    first = world.propose().artifact.pr_action_id
    session = _second_session(world)
    second = world.pipeline.propose_infra_pr(
        world.project.id, session, "Infra 2", {"docs/two.md": "# two\n"}
    ).artifact
    world.pipeline.record_verdict(first, "qa", "fail", FAIL)

    corrected = world.propose({**CLEAN_FILES, "docs/infra.md": "# Infra\n\nfixed\n"})

    assert (corrected.status, corrected.artifact.pr_action_id) == ("corrected", first)
    assert corrected.artifact.branch == BRANCH
    assert world.commits_on_branch(BRANCH) == 2
    assert world.commits_on_branch(second.branch) == 1
    assert world.pipeline.get(second.pr_action_id).gate_status == "awaiting_qa"


def test_a_proposal_identical_to_the_head_is_refused_not_committed_not_counted(
    world: World,
) -> None:
    pr = world.propose().artifact.pr_action_id
    world.pipeline.record_verdict(pr, "qa", "fail", FAIL)
    decided = len(world.of_type("action.decided"))

    same = world.propose()

    assert same.status == "unchanged"
    assert same.to_dict()["status"] == "unchanged"  # what the model's tool call is told
    art = world.pipeline.get(pr)
    assert (art.gate_status, art.gate_correction_count) == ("changes_requested", 0)
    assert world.commits_on_branch() == 1
    assert (world.pipeline.timeline(pr)[-1].note or "").startswith("no change")
    assert len(world.of_type("action.decided")) == decided  # nothing to decide
    assert world.of_type("infra.pr_corrected") == []
    [event] = world.of_type("pr.correction_unchanged")
    assert event.payload == {
        "pr_action_id": pr,
        "kind": "infra",
        "task_id": None,
        "detail": "the proposed files are identical to the PR's head",
    }
    # A subset of the files, unchanged, is no change either; one changed file is.
    assert world.propose({"Dockerfile": CLEAN_FILES["Dockerfile"]}).status == "unchanged"
    assert world.propose({"docs/new.md": "# new\n"}).status == "corrected"
    assert world.commits_on_branch() == 2


def test_the_rule_based_loop_stops_on_a_correction_it_cannot_make(world: World) -> None:
    pr = world.propose().artifact.pr_action_id
    _to_human(world.pipeline, pr)
    world.pipeline.reject(pr, "alice", "rename the service to loja-api")

    settled = world.pipeline.settle(pr)

    assert (settled.gate_status, settled.gate_correction_count) == ("changes_requested", 0)
    assert world.commits_on_branch() == 1
    assert len(world.of_type("pr.correction_unchanged")) == 1
    with pytest.raises(ConflictError):
        world.pipeline.approve(pr, "alice")  # still with the author, not the operator
