"""Dev task PRs through the same gates as infra PRs (real git; real scanners where noted)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from test_pipeline_support import World, make_world, require_scanners

from backend.agents.roster import derive_roster
from backend.dev.tasks import DevTasks, demo_files, run_demo_task, seed_demo_tasks
from backend.exceptions import ConflictError, ValidationError
from backend.store.db import Database

MODULES = {
    "modules": [
        {"name": "api", "path": ".", "language": "python", "kind": "service", "port": 8000},
        {"name": "worker", "path": "worker", "language": "python", "kind": "worker"},
    ]
}
FAIL = [
    {
        "tool": "hadolint",
        "rule": "DL3007",
        "file": "README.md",
        "line": 1,
        "severity": "error",
        "message": "bad",
    }
]


def _dev(db: Database, tmp_path: Path) -> tuple[World, DevTasks]:
    world = make_world(db, tmp_path, module_map=MODULES)
    world.store.activate_execution(world.project.id)
    return world, DevTasks(world.store, world.settings)


def test_task_pr_goes_through_the_shared_state_machine(any_db: Database, tmp_path: Path) -> None:
    world, dev = _dev(any_db, tmp_path)
    tasks = seed_demo_tasks(dev, world.project)
    assert sorted(t.module for t in tasks) == ["api", "worker"]
    assert seed_demo_tasks(dev, world.project) == []  # one task per module, once
    task = next(t for t in tasks if t.module == "worker")
    branch = f"feature/task-{task.id}"

    files = demo_files(world.project, task, world.repo)
    assert list(files) == ["worker/README.md"]
    opened = dev.propose_task_pr(task.id, files)
    assert (opened.gate_status, opened.branch) == ("awaiting_qa", branch)
    assert world.commits_on_branch(branch) == 1

    dev.record_verdict(task.id, "qa", "fail", FAIL, "bad")
    corrected = dev.propose_task_pr(task.id, {"worker/README.md": "# worker\n\nfixed\n"})
    assert (corrected.gate_status, corrected.gate_correction_count) == ("awaiting_qa", 1)
    assert corrected.pr_action_id == opened.pr_action_id
    assert world.commits_on_branch(branch) == 2
    with pytest.raises(ConflictError):
        dev.propose_task_pr(task.id, files)  # not in changes_requested

    dev.record_verdict(task.id, "qa", "pass")
    done = dev.record_verdict(task.id, "secops", "pass")
    assert done.gate_status == "awaiting_human"
    with pytest.raises(ValidationError):
        dev.reject(task.id, "alice", " ")
    merged = dev.approve(task.id, "alice")
    assert merged.gate_status == "merged"
    assert "fixed" in world.git("show", "main:worker/README.md")

    started = world.of_type("dev.task_started")
    assert [(e.agent, e.payload["task_id"]) for e in started] == [("dev-worker", task.id)]
    verdicts = world.of_type("artifact.qa_verdict")
    assert all(
        e.payload["task_id"] == task.id and "pr_action_id" not in e.payload for e in verdicts
    )
    moves = [
        (e.payload["from_status"], e.payload["gate_status"])
        for e in world.of_type("pr.gate_changed")
    ]
    assert moves == [
        (None, "awaiting_qa"),
        ("awaiting_qa", "changes_requested"),
        ("changes_requested", "awaiting_qa"),
        ("awaiting_qa", "awaiting_secops"),
        ("awaiting_secops", "awaiting_human"),
        ("awaiting_human", "merged"),
    ]
    assert [e.payload["task_id"] for e in world.of_type("dev.task_done")] == [task.id]
    assert [h.actor for h in dev.timeline(task.id)][-1] == "alice"


def test_concurrent_approvals_of_a_task_pr_one_wins(sqlite_db: Database, tmp_path: Path) -> None:
    world, dev = _dev(sqlite_db, tmp_path)
    task = seed_demo_tasks(dev, world.project)[0]
    dev.propose_task_pr(task.id, demo_files(world.project, task, world.repo))
    dev.record_verdict(task.id, "qa", "pass")
    dev.record_verdict(task.id, "secops", "pass")
    barrier = threading.Barrier(2)
    results: list[object] = []

    def act(who: str) -> None:
        barrier.wait()
        try:
            results.append(dev.approve(task.id, who).gate_status)
        except ConflictError as exc:
            results.append(exc)

    threads = [threading.Thread(target=act, args=(w,)) for w in ("alice", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results.count("merged") == 1
    assert sum(isinstance(r, ConflictError) for r in results) == 1


def test_demo_task_passes_the_real_gates_and_shows_on_the_roster(
    sqlite_db: Database, tmp_path: Path
) -> None:
    require_scanners()
    world, dev = _dev(sqlite_db, tmp_path)
    task = next(t for t in seed_demo_tasks(dev, world.project) if t.module == "api")

    settled = run_demo_task(dev, task.id)

    assert settled.gate_status == "awaiting_human", settled.findings
    assert "Document how to run api locally" in world.git("show", f"{settled.branch}:README.md")
    secops = world.of_type("artifact.secops_verdict")
    assert [(e.payload["task_id"], e.payload["verdict"]) for e in secops] == [(task.id, "pass")]
    roster = {r.id: r for r in derive_roster(world.events.after(0, 10_000))}
    assert {"dev-api", "dev-worker", "qa", "secops"} <= set(roster)
    assert roster["dev-api"].status == "idle"
    assert task.id in roster["dev-api"].detail


def test_tasks_created_in_one_millisecond_keep_their_order(
    any_db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world, dev = _dev(any_db, tmp_path)
    monkeypatch.setattr("backend.dev.tasks.utcnow_iso", lambda: "2026-01-01T00:00:00.000Z")
    made = [dev.create_task(world.project.id, "worker", f"passo {n}").id for n in range(12)]
    assert [t.id for t in dev.tasks(world.project.id)] == made
