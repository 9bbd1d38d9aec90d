"""Infra PR pipeline on SQLite and real PostgreSQL, with real git (verdicts recorded by hand).

The scanner-driven flows live in ``test_pipeline_gates.py``; here the gate verdicts are
recorded directly so every state-machine path runs on both databases quickly.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from test_pipeline_support import BRANCH, CLEAN_FILES, World, make_world

from backend.exceptions import ConflictError, PathError, ValidationError
from backend.store.db import Database

FAIL = [
    {
        "tool": "hadolint",
        "rule": "DL3007",
        "file": "Dockerfile",
        "line": 1,
        "severity": "error",
        "message": "Using latest is prone to errors",
    }
]


@pytest.fixture
def world(any_db: Database, tmp_path: Path) -> World:
    return make_world(any_db, tmp_path)


def _to_human(world: World, pr: str) -> None:
    world.pipeline.record_verdict(pr, "qa", "pass")
    world.pipeline.record_verdict(pr, "secops", "pass")


def test_pr_with_n_files_opens_on_infra_branch_in_one_commit(world: World) -> None:
    result = world.propose()

    assert result.status == "opened"
    assert result.decision.outcome == "allow"
    art = result.artifact
    assert art.gate_status == "awaiting_qa"
    assert art.branch == BRANCH
    assert art.pr_action_id.startswith("act_")
    assert art.files == tuple(sorted(CLEAN_FILES))
    assert world.commits_on_branch() == 1
    assert world.git("rev-parse", BRANCH).strip() == art.head
    changed = world.git("diff-tree", "--no-commit-id", "--name-only", "-r", art.head).split()
    assert sorted(changed) == sorted(CLEAN_FILES)
    assert "Dockerfile" not in world.git("ls-tree", "--name-only", "main").split()
    opened = world.of_type("infra.pr_opened")
    assert [e.payload["pr_action_id"] for e in opened] == [art.pr_action_id]
    assert opened[0].payload["paths"] == sorted(CLEAN_FILES)
    decided = world.of_type("action.decided")[-1]
    assert decided.payload["outcome"] == "allow"
    assert decided.payload["stage"] == "agent_autonomy"
    assert [
        (h.from_status, h.to_status, h.actor) for h in world.pipeline.timeline(art.pr_action_id)
    ] == [(None, "awaiting_qa", "infra")]
    shown = world.pipeline.files(art.pr_action_id)
    assert {f["path"]: f["content"] for f in shown["files"]} == CLEAN_FILES
    assert "+USER 10001" in shown["diff"]


def test_correction_commits_on_same_branch_and_pr(world: World) -> None:
    pr = world.propose().artifact.pr_action_id
    art = world.pipeline.record_verdict(pr, "qa", "fail", FAIL, "DL3007")
    assert art.gate_status == "changes_requested"
    assert world.pipeline.findings(pr)[0]["rule"] == "DL3007"

    fixed = dict(CLEAN_FILES, Dockerfile=CLEAN_FILES["Dockerfile"] + "EXPOSE 8000\n")
    again = world.propose(fixed)

    assert again.status == "corrected"
    assert again.artifact.pr_action_id == pr
    assert again.artifact.gate_status == "awaiting_qa"
    assert again.artifact.gate_correction_count == 1
    assert world.commits_on_branch() == 2
    assert world.git("rev-parse", BRANCH).strip() == again.artifact.head
    assert [a.pr_action_id for a in world.pipeline.in_review()] == [pr]
    assert world.git("branch", "--list").split().count(BRANCH) == 1
    corrected = world.of_type("infra.pr_corrected")
    assert [(e.payload["pr_action_id"], e.payload["correction"]) for e in corrected] == [(pr, 1)]
    assert world.of_type("infra.pr_opened")[0].payload["pr_action_id"] == pr
    # A correction is only possible after changes_requested.
    with pytest.raises(ConflictError):
        world.propose(fixed)
    assert world.commits_on_branch() == 2
    assert world.of_type("infra.pr_failed")[-1].payload["pr_action_id"] == pr


def test_pass_pass_then_approve_merges_into_main(world: World) -> None:
    pr = world.propose().artifact.pr_action_id
    _to_human(world, pr)
    assert world.pipeline.get(pr).gate_status == "awaiting_human"
    with pytest.raises(ValidationError):
        world.pipeline.approve(pr, "  ")

    art = world.pipeline.approve(pr, "alice", "looks right")

    assert art.gate_status == "merged"
    on_main = world.git("ls-tree", "-r", "--name-only", "main").split()
    assert set(CLEAN_FILES) <= set(on_main)
    assert world.git("show", "main:Dockerfile") == CLEAN_FILES["Dockerfile"]
    merged = world.of_type("infra.pr_merged")
    assert [(e.payload["pr_action_id"], e.payload["operator"]) for e in merged] == [(pr, "alice")]
    timeline = world.pipeline.timeline(pr)
    assert [h.to_status for h in timeline] == [
        "awaiting_qa",
        "awaiting_secops",
        "awaiting_human",
        "merged",
    ]
    assert [h.actor for h in timeline] == ["infra", "qa", "secops", "alice"]
    assert world.pipeline.in_review() == []
    gate_moves = [
        (e.payload["from_status"], e.payload["gate_status"])
        for e in world.of_type("infra.gate_changed")
    ]
    assert gate_moves[-1] == ("awaiting_human", "merged")
    verdicts = world.of_type("artifact.qa_verdict") + world.of_type("artifact.secops_verdict")
    assert all(e.payload["pr_action_id"] == pr and e.payload["task_id"] is None for e in verdicts)
    with pytest.raises(ConflictError):
        world.pipeline.approve(pr, "bob")


def test_reject_requires_a_reason_and_sends_back_to_the_agent(world: World) -> None:
    pr = world.propose().artifact.pr_action_id
    _to_human(world, pr)
    for reason in ("", "   "):
        with pytest.raises(ValidationError):
            world.pipeline.reject(pr, "alice", reason)
    assert world.pipeline.get(pr).gate_status == "awaiting_human"

    art = world.pipeline.reject(pr, "alice", "expose port 9000 instead")

    assert art.gate_status == "changes_requested"
    assert [f["message"] for f in art.findings] == ["expose port 9000 instead"]
    assert world.pipeline.timeline(pr)[-1].actor == "alice"
    # The rule-based author cannot apply "expose port 9000": its correction has no diff,
    # so nothing is committed or counted and the PR stays with the author.
    corrected = world.pipeline.correct(pr)
    assert corrected.status == "unchanged"
    assert world.commits_on_branch() == 1
    art = world.pipeline.get(pr)
    assert (art.gate_status, art.gate_correction_count) == ("changes_requested", 0)
    assert (world.pipeline.timeline(pr)[-1].note or "").startswith("no change")
    [unchanged] = world.of_type("pr.correction_unchanged")
    assert unchanged.payload["pr_action_id"] == pr


def test_failing_corrections_block_and_blocked_rejects_verdicts(world: World) -> None:
    pr = world.propose().artifact.pr_action_id
    for attempt in range(3):
        assert (
            world.pipeline.record_verdict(pr, "qa", "fail", FAIL).gate_status == "changes_requested"
        )
        world.propose(dict(CLEAN_FILES, **{"docs/infra.md": f"# Infra {attempt}\n"}))
    art = world.pipeline.record_verdict(pr, "qa", "fail", FAIL, "DL3007 again")

    assert art.gate_status == "blocked"
    assert art.blocked
    assert "limit 3" in (art.blocked_reason or "")
    assert art.gate_correction_count == 3
    assert world.commits_on_branch() == 4
    for gate in ("qa", "secops"):
        with pytest.raises(ConflictError):
            world.pipeline.record_verdict(pr, gate, "pass")  # type: ignore[arg-type]
    with pytest.raises(ConflictError):
        world.pipeline.run_gates(pr)
    with pytest.raises(ConflictError):
        world.propose()
    blocked = world.of_type("infra.artifact_blocked")
    assert [e.payload["pr_action_id"] for e in blocked] == [pr]
    assert world.pipeline.get(pr).gate_status == "blocked"

    art = world.pipeline.unblock(pr, "carol", "one more round")
    assert (art.gate_status, art.gate_correction_count, art.blocked) == (
        "changes_requested",
        0,
        False,
    )
    with pytest.raises(ConflictError):
        world.pipeline.unblock(pr, "carol")
    closed = world.pipeline.close(pr, "carol", "superseded")
    assert closed.gate_status == "closed"
    assert world.pipeline.timeline(pr)[-1].actor == "carol"


def test_two_operators_approving_at_once_exactly_one_wins(world: World) -> None:
    pr = world.propose().artifact.pr_action_id
    _to_human(world, pr)
    barrier = threading.Barrier(2)
    outcomes: dict[str, object] = {}

    def act(name: str) -> None:
        barrier.wait()
        try:
            outcomes[name] = world.pipeline.approve(pr, name).gate_status
        except ConflictError as exc:
            outcomes[name] = exc

    threads = [threading.Thread(target=act, args=(n,)) for n in ("alice", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)

    wins = [n for n, o in outcomes.items() if o == "merged"]
    losses = [n for n, o in outcomes.items() if isinstance(o, ConflictError)]
    assert len(wins) == 1, outcomes
    assert len(losses) == 1, outcomes
    merges = world.git("rev-list", "--merges", "main").split()
    assert len(merges) == 1
    assert [e.payload["operator"] for e in world.of_type("infra.pr_merged")] == wins
    assert world.pipeline.timeline(pr)[-1].actor == wins[0]


def test_without_seeded_autonomy_decide_asks_and_no_pr_opens(
    any_db: Database, tmp_path: Path
) -> None:
    world = make_world(any_db, tmp_path, seed=False)

    result = world.propose()

    assert result.status == "pending"
    assert result.artifact is None
    assert result.decision.outcome == "ask"
    assert result.approval_id
    assert not world.branch_exists()
    assert world.pipeline.in_review() == []
    requested = world.of_type("approval.requested")
    assert [e.payload["approval_id"] for e in requested] == [result.approval_id]
    pending = world.store.pending_approvals()
    assert pending[0]["action"] == "open_infra_pr"
    assert {f["path"] for f in pending[0]["payload"]["files"]} == set(CLEAN_FILES)


def test_denied_by_autonomy_opens_nothing(sqlite_db: Database, tmp_path: Path) -> None:
    world = make_world(sqlite_db, tmp_path, seed=False)
    with world.db.transaction() as tx:
        tx.execute(
            "autonomy_upsert",
            {
                "project_id": world.project.id,
                "agent": "infra",
                "action": "open_infra_pr",
                "value": "deny",
            },
        )
    with pytest.raises(ConflictError, match="denied"):
        world.propose()
    assert not world.branch_exists()
    assert world.of_type("action.decided")[-1].payload["outcome"] == "deny"


@pytest.mark.parametrize(
    "bad",
    [
        "../escape.txt",
        "/etc/passwd",
        ".git/hooks/post-commit",
        "a/../../b",
        "--output=report.pth",
        "deploy/-rf",
    ],
)
def test_path_traversal_writes_nothing(sqlite_db: Database, tmp_path: Path, bad: str) -> None:
    world = make_world(sqlite_db, tmp_path)
    objects_before = world.git("count-objects", "-v")

    with pytest.raises(PathError):
        world.propose({**CLEAN_FILES, bad: "pwned\n"})

    assert not world.branch_exists()
    assert world.pipeline.in_review() == []
    assert world.git("count-objects", "-v") == objects_before
    failed = world.of_type("infra.pr_failed")
    assert len(failed) == 1
    assert bad in failed[0].payload["error"]
    assert not (tmp_path / "escape.txt").exists()


def test_symlink_escape_drops_the_half_opened_branch(sqlite_db: Database, tmp_path: Path) -> None:
    world = make_world(sqlite_db, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, world.repo.repo_path / "link")

    with pytest.raises(PathError, match="symlink"):
        world.propose({**CLEAN_FILES, "link/evil.sh": "echo pwned\n"})

    assert not world.branch_exists()
    assert list(outside.iterdir()) == []
    assert world.of_type("infra.pr_failed")
    # Nothing is stuck: a valid proposal in the same session opens normally afterwards.
    assert world.propose().status == "opened"
