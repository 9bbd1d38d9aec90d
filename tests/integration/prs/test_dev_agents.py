"""Real dev agents: a PO task worked by its ``dev-<module>`` agent in a per-task git worktree,
through confined file tools, into a dev PR that passes the real gates (real git, real
scanners; the offline dev model, a scripted model and a loopback OpenAI server).

The runs through the scanners use SQLite only (the gates do not depend on the database and
cost seconds); claims, leases and refusals run on both."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from test_pipeline_support import World, make_world, require_scanners

from backend.agents.providers.base import UserMessage
from backend.agents.team_service import TeamService
from backend.dev.agents import DevAgents, start_execution, task_creator
from backend.dev.tasks import DevTasks
from backend.dev.worker import DEV, DevWorker, dev_key
from backend.exceptions import ConflictError
from backend.jobs import Jobs, RetryAfterError, SnoozeError
from backend.prs.authoring import ModelAuthor
from backend.settings import Settings, load_settings
from backend.store.db import Database, open_database
from tests.openai_server import serve, text, tool_call

MODULES = {
    "modules": [
        {"name": "api", "path": ".", "language": "python", "kind": "service", "port": 8000},
        {"name": "worker", "path": "worker", "language": "python", "kind": "job"},
    ]
}
PO_SCRIPT = {
    "agents": {
        "po": [
            {
                "tool_calls": [
                    {
                        "name": "create_task",
                        "arguments": {
                            "module": "worker",
                            "title": "Document the worker",
                            "description": "How to run it locally",
                        },
                    },
                    {"name": "create_task", "arguments": {"module": "nope", "title": "Lost"}},
                ]
            },
            {"text": "Backlog pronto."},
        ]
    }
}


def _worker(agents: DevAgents, db: Database | None = None) -> DevWorker:
    """A dev worker on its own job engine (on ``db``, the world's database by default)."""
    return DevWorker(agents, agents.settings, Jobs(db or agents.dev_tasks.store.db))


async def _sweep(worker: DevWorker) -> list[str]:
    """What the module jobs do, run here in turn: each runnable module's next task."""
    done = []
    for project_id, module in worker.queue.runnable_modules():
        task = await worker.work_next(project_id, module, "test-worker")
        if task is not None:
            done.append(task)
    return done


def _settings(world: World, **kw: Any) -> Settings:
    return load_settings(data_dir=world.settings.data_dir, **kw)


def _po_task(world: World, dev: DevTasks) -> str:
    """The PO's create_task through a real PO turn; an unknown module is a tool error."""
    team = TeamService(
        world.settings, world.store, scripts=PO_SCRIPT, task_creator=task_creator(dev)
    )
    turn = asyncio.run(team.agent_turn(world.project.id, world.session_id, "po", "Quebre"))
    good, bad = turn.tool_results
    assert (good["error"], good["result"]["module"], good["result"]["status"]) == (
        False,
        "worker",
        "todo",
    )
    assert bad["error"] is True
    assert "'nope' is not in project" in bad["result"]["error"]
    assert "api, worker" in bad["result"]["error"]  # the model is told what exists
    [task] = dev.tasks(world.project.id)  # nothing was created for the unknown module
    created = world.of_type("backlog.task_created")
    assert [e.payload["task_id"] for e in created] == [task.id]
    return task.id


def _world(db: Database, tmp_path: Path, **settings: Any) -> tuple[World, DevTasks, DevAgents]:
    world = make_world(db, tmp_path, module_map=MODULES)
    (world.repo.repo_path / "worker").mkdir()
    (world.repo.repo_path / "worker" / "README.md").write_text("# worker\n")
    world.git("add", "-A")
    world.git("commit", "-qm", "worker")
    dev = DevTasks(world.store, world.settings, pipeline=world.pipeline)
    agents = DevAgents(_settings(world, **settings), dev)
    return world, dev, agents


def _clean(path: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(path), "status", "--porcelain"], capture_output=True, text=True
    ).stdout


def test_offline_dev_agent_turns_a_po_task_into_a_dev_pr_that_passes_the_gates(
    sqlite_db: Database, tmp_path: Path
) -> None:
    require_scanners()
    world, dev, agents = _world(sqlite_db, tmp_path)
    task_id = _po_task(world, dev)
    with pytest.raises(ConflictError, match="no task"):  # only the PO's tasks count
        start_execution(dev, world.store.create_project("empty", module_map=MODULES).id)
    project, todo = start_execution(dev, world.project.id)
    assert project.execution_activated
    assert [t.id for t in todo] == [task_id]

    worker = _worker(agents)

    assert asyncio.run(_sweep(worker)) == [task_id]
    task = dev.get(task_id)
    assert (task.status, task.gate_status, task.branch) == (
        "in_review",
        "awaiting_qa",
        f"feature/task-{task_id}",
    )
    assert task.files == ("worker/README.md",)
    assert world.commits_on_branch(task.branch) == 1
    readme = world.git("show", f"{task.branch}:worker/README.md")
    assert readme == "# worker\n\n- Document the worker (by dev-worker)\n"
    # A real worktree under the data dir, on the task branch, clean after the commit.
    tree = world.settings.data_dir / "worktrees" / world.project.id / task_id
    assert world.git("-C", str(tree), "symbolic-ref", "HEAD").strip() == f"refs/heads/{task.branch}"
    assert _clean(tree) == ""
    turn = world.of_type("agent.turn")[-1]
    assert (turn.agent, turn.session_id) == ("dev-worker", task_id)
    steps = ["list_files", "read_file", "write_file", "propose_task_pr"]
    assert turn.payload["tool_calls"] == steps

    settled = dev.settle(task_id)  # the real QA and SecOps gates
    assert settled.gate_status == "awaiting_human"
    assert [e.payload["task_id"] for e in world.of_type("dev.task_done")] == [task_id]
    assert asyncio.run(_sweep(worker)) == []  # in review: nothing to run again
    merged = dev.approve(task_id, "ana")
    assert (merged.status, merged.gate_status) == ("done", "merged")
    assert "Document the worker" in world.git("show", "main:worker/README.md")
    assert asyncio.run(_sweep(worker)) == []
    agents.prune()
    assert not tree.exists()  # a finished task's worktree goes; its branch stays
    assert world.branch_exists(task.branch)


def test_a_dev_agent_on_an_openai_compatible_model_proposes_through_the_wire(
    sqlite_db: Database, tmp_path: Path
) -> None:
    require_scanners()
    with serve() as server:
        world, dev, agents = _world(
            sqlite_db, tmp_path, agent_models={"dev-*": f"openai:gpt-test@{server.url}"}
        )
        task_id = _po_task(world, dev)
        start_execution(dev, world.project.id)
        content = "# worker\n\nRun it: `python -m worker`\n"
        server.answer(
            tool_call("c1", "list_files", {"path": "worker"}),
            tool_call("c2", "read_file", {"path": "worker/README.md"}),
            tool_call("c3", "write_file", {"path": "worker/README.md", "content": content}),
            tool_call("c4", "propose_task_pr", {"task_id": task_id}),
            text("PR opened."),
        )
        result = asyncio.run(agents.work(task_id))
        assert result.text == "PR opened."
        assert [r["error"] for r in result.tool_results] == [False] * 4
        bodies = [r["body"] for r in server.requests]
    assert len(bodies) == 5
    offered = [t["function"]["name"] for t in bodies[0]["tools"]]
    assert offered == ["list_files", "read_file", "write_file", "propose_task_pr", "report_blocked"]
    first = bodies[0]["messages"][-1]["content"]
    assert f"Document the worker — task {task_id}, module worker, path worker" in first
    listed = json.loads(bodies[1]["messages"][-1]["content"])
    assert bodies[1]["messages"][-1]["role"] == "tool"
    assert listed == {"files": ["worker/README.md"], "truncated": 0}
    assert json.loads(bodies[2]["messages"][-1]["content"])["content"] == "# worker\n"
    settled = dev.settle(task_id)
    assert (settled.status, settled.gate_status) == ("in_review", "awaiting_human")
    assert world.git("show", f"{settled.branch}:worker/README.md") == content


def test_file_tools_refuse_escapes_and_the_model_sees_why(any_db: Database, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("do not read\n")
    world, dev, _ = _world(any_db, tmp_path)
    repo = world.repo.repo_path
    os.symlink(outside / "secret.txt", repo / "worker" / "link.txt")
    os.symlink(outside, repo / "worker" / "linked")  # a symlinked parent
    world.git("add", "-A")
    world.git("commit", "-qm", "symlinks")
    task = dev.create_task(world.project.id, "worker", "Escape")
    tries = [
        ("read_file", {"path": "../x"}),
        ("read_file", {"path": "worker/../../x"}),
        ("write_file", {"path": str(outside / "x"), "content": "x"}),
        ("read_file", {"path": "worker/link.txt"}),
        ("write_file", {"path": "worker/linked/new.txt", "content": "x"}),
        ("read_file", {"path": ".git/config"}),
        ("write_file", {"path": "worker/.git/config", "content": "x"}),
        ("write_file", {"path": "app.py", "content": "x"}),  # another module's file
        ("list_files", {"path": "."}),
    ]
    script = {
        "agents": {
            "dev-worker": [
                {"tool_calls": [{"name": n, "arguments": a} for n, a in tries]},
                {
                    "tool_calls": [
                        {"name": "report_blocked", "arguments": {"task_id": task.id, "reason": "x"}}
                    ]
                },
                {"text": "blocked"},
            ]
        }
    }
    agents = DevAgents(_settings(world), dev, scripts=script)
    result = asyncio.run(agents.work(task.id))
    refused = result.tool_results[: len(tries)]
    assert all(r["error"] and r["result"]["code"] == "invalid_path" for r in refused), refused
    messages = [r["result"]["error"] for r in refused]
    assert "'..'" in messages[0]
    assert "'..'" in messages[1]
    assert "absolute" in messages[2]
    assert "symlink" in messages[3]
    assert "symlink" in messages[4]
    assert ".git" in messages[5]
    assert ".git" in messages[6]
    assert "outside module path 'worker'" in messages[7]
    assert "outside module" in messages[8]
    assert not (outside / "x").exists()
    assert not (outside / "new.txt").exists()
    assert (outside / "secret.txt").read_text() == "do not read\n"
    blocked = dev.get(task.id)
    assert (blocked.status, blocked.reason) == ("blocked", "x")
    assert world.of_type("backlog.task_blocked")[-1].payload == {"task_id": task.id, "reason": "x"}


def test_a_task_left_working_by_a_dead_worker_is_taken_again_and_once(
    any_db: Database, tmp_path: Path
) -> None:
    world, dev, agents = _world(any_db, tmp_path, dev_lease_s=30)
    task = dev.create_task(world.project.id, "worker", "Document the worker")
    world.store.activate_execution(world.project.id)
    other_db = open_database(any_db.url)  # type: ignore[attr-defined]
    one, two = _worker(agents), _worker(agents, other_db)
    # A process took the module's job and the task, made the worktree and wrote half the
    # change, then was killed -9: its job's lease lapses, nothing else of it remains.
    payload = {"project_id": world.project.id, "module": "worker"}
    one.jobs.enqueue(DEV, payload, unique_key=dev_key(world.project.id, "worker"))
    assert one.jobs.store.claim(DEV, "dead-process", limit=1, lease_s=0.2)
    assert one.queue.take(task.id, "dead-process") == 1
    (agents.workspace(task).root / "worker" / "notes.txt").write_text("half done\n")

    async def restart() -> None:
        tasks: list[asyncio.Task[Any]] = []

        def spawn(coro: Any, name: str) -> asyncio.Task[Any]:
            tasks.append(asyncio.create_task(coro, name=name))
            return tasks[-1]

        one.jobs.start(spawn)
        two.jobs.start(spawn)
        await asyncio.gather(asyncio.to_thread(one.wake), asyncio.to_thread(two.wake))
        try:
            for _ in range(600):
                if dev.get(task.id).status == "in_review":
                    await asyncio.to_thread(one.jobs.wait_idle, DEV, 60)
                    return
                await asyncio.sleep(0.1)
            raise AssertionError("the task was not taken again")
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    try:
        asyncio.run(restart())
    finally:
        other_db.close()
    done = dev.get(task.id)
    assert (done.status, done.attempts) == ("in_review", 2)  # taken again, once
    assert sorted(done.files) == ["worker/README.md", "worker/notes.txt"]  # the worktree reused
    assert len(world.of_type("dev.task_started")) == 1
    assert len(world.of_type("agent.turn")) == 1  # one turn ran, in one of the two processes


BAD = 'FROM python:latest\nWORKDIR /app\nCOPY . .\nUSER 10001\nCMD ["python", "-m", "app"]\n'
GOOD = BAD.replace("python:latest", "python:3.11.9-slim-bookworm")


def test_a_dev_agent_on_a_model_corrects_its_own_pr_after_a_gate_fails(
    sqlite_db: Database, tmp_path: Path
) -> None:
    require_scanners()
    with serve() as server:
        world, dev, agents = _world(
            sqlite_db, tmp_path, agent_models={"dev-*": f"openai:gpt-test@{server.url}"}
        )
        task = dev.create_task(world.project.id, "worker", "Containerize the worker")
        server.answer(
            tool_call("c1", "write_file", {"path": "worker/Dockerfile", "content": BAD}),
            tool_call("c2", "propose_task_pr", {"task_id": task.id}),
            text("PR opened."),
            tool_call("c3", "write_file", {"path": "worker/Dockerfile", "content": GOOD}),
            tool_call("c4", "propose_task_pr", {"task_id": task.id}),
            text("Pinned the base image."),
        )
        asyncio.run(agents.work(task.id))
        # The backend's wiring: the pipeline's author runs the PR author's turn on the loop.
        team = TeamService(agents.settings, world.store, dev_correction=agents.correction_turn)
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()

        async def author() -> ModelAuthor:  # built on its loop, as Backend.start does
            return ModelAuthor(team, asyncio.get_running_loop(), timeout_s=60)

        world.pipeline.author = asyncio.run_coroutine_threadsafe(author(), loop).result(10)
        try:
            settled = dev.settle(task.id)  # QA fails on :latest, the model fixes it, gates pass
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
        correction = server.requests[3]["body"]["messages"][-1]["content"]
    assert (settled.gate_status, settled.gate_correction_count) == ("awaiting_human", 1)
    assert "DL3007" in correction  # the model was told the finding
    assert f"task {task.id}, module worker" in correction
    assert world.git("show", f"{settled.branch}:worker/Dockerfile") == GOOD
    assert world.commits_on_branch(settled.branch) == 2


class _Paused(ConflictError):
    code = "agent_paused"  # what the runtime's pause check raises (a ConflictError, 409)


def test_a_refused_turn_costs_no_attempt_and_a_failing_one_blocks_at_the_limit(
    any_db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CADENCIA_PROVIDER_RETRIES", "0")  # a provider down fails at once
    world, dev, agents = _world(any_db, tmp_path, dev_max_attempts=2)
    task = dev.create_task(world.project.id, "worker", "Document the worker")
    world.store.activate_execution(world.project.id)
    worker = _worker(agents)

    def paused(agent_id: str, calls: int) -> Any:
        raise _Paused(f"{agent_id} is paused by ana")

    agents.runtime.providers = paused
    with pytest.raises(SnoozeError):  # the module's job waits a while, uncounted
        asyncio.run(worker.work_next(world.project.id, "worker", "w"))
    waiting = dev.get(task.id)
    assert (waiting.status, waiting.attempts, waiting.reason) == (
        "todo",
        0,
        "dev-worker is paused by ana",
    )

    with serve() as server:  # the model provider is down: 500s (no reply queued)
        agents.runtime.providers = DevAgents(
            _settings(world, agent_models={"dev-*": f"openai:m@{server.url}"}), dev
        )._provider
        with pytest.raises(RetryAfterError):  # attempts left: the job retries later
            asyncio.run(worker.work_next(world.project.id, "worker", "w"))
        assert dev.get(task.id).attempts == 1
        assert asyncio.run(worker.work_next(world.project.id, "worker", "w")) == task.id
        after = dev.get(task.id)
        assert after.attempts == 2
    assert after.status == "blocked"
    assert "turn failed (attempt 2)" in str(after.reason)
    assert world.of_type("backlog.task_blocked")[-1].payload["task_id"] == task.id


def test_an_operator_turn_continues_the_task_and_a_refused_proposal_keeps_the_files(
    any_db: Database, tmp_path: Path
) -> None:
    world, dev, _ = _world(any_db, tmp_path)
    task = dev.create_task(world.project.id, "worker", "Write a")

    def write(text: str) -> dict[str, Any]:
        args = {"path": "worker/a.md", "content": text}
        return {"tool_calls": [{"name": "write_file", "arguments": args}]}

    propose = {"tool_calls": [{"name": "propose_task_pr", "arguments": {"task_id": task.id}}]}
    read = {"tool_calls": [{"name": "read_file", "arguments": {"path": "worker/a.md"}}]}
    script = {
        "agents": {
            "dev-worker": [
                write("one\n"),
                propose,
                {"text": "opened"},
                write("two\n"),
                propose,  # refused: the PR waits for QA, no correction is asked for
                {"text": "refused"},
                read,
                {"text": "still there"},
            ]
        }
    }
    agents = DevAgents(_settings(world), dev, scripts=script)
    asyncio.run(agents.work(task.id))
    assert dev.get(task.id).gate_status == "awaiting_qa"
    second = asyncio.run(agents.operator_turn(world.project.id, "dev-worker", "make it two"))
    assert second.tool_results[1]["error"] is True
    third = asyncio.run(agents.operator_turn(world.project.id, "dev-worker", "show me"))
    assert third.tool_results[0]["result"]["content"] == "two\n"
    assert world.commits_on_branch(f"feature/task-{task.id}") == 1
    with pytest.raises(ConflictError, match="dev-api has no task"):
        asyncio.run(agents.operator_turn(world.project.id, "dev-api", "oi"))
    history, _ = agents.runtime.history(task.id, "dev-worker")  # one conversation per task
    said = [m.text for m in history if isinstance(m, UserMessage)]
    assert len(said) == 3
    assert said[1].endswith("The operator says: make it two")


def test_a_lost_or_broken_worktree_is_recreated_on_its_branch(
    sqlite_db: Database, tmp_path: Path
) -> None:
    world, dev, agents = _world(sqlite_db, tmp_path)
    task = dev.create_task(world.project.id, "worker", "Recreate")
    first = agents.workspace(task)
    first.write_file("worker/kept.txt", "x\n")
    assert agents.workspace(task).read_file("worker/kept.txt")["content"] == "x\n"  # reused
    shutil.rmtree(first.root)  # the data dir lost it
    again = agents.workspace(task)
    assert again.root == first.root
    assert again.list_files()["files"] == ["worker/README.md"]
    (again.root / ".git").unlink()  # broken: not a worktree any more
    third = agents.workspace(task)
    branch = world.git("-C", str(third.root), "symbolic-ref", "HEAD").strip()
    assert branch == f"refs/heads/feature/task-{task.id}"


def test_a_task_whose_turn_dies_every_time_is_blocked_not_taken_forever(
    any_db: Database, tmp_path: Path
) -> None:
    world, dev, agents = _world(any_db, tmp_path, dev_max_attempts=2)
    task = dev.create_task(world.project.id, "worker", "Crashes the process")
    world.store.activate_execution(world.project.id)
    worker = _worker(agents)
    for attempt in (1, 2):  # two processes took it and were killed -9 mid-turn
        assert worker.queue.take(task.id, f"dead-{attempt}") == attempt
    assert asyncio.run(_sweep(worker)) == [task.id]  # blocked, not run
    assert asyncio.run(_sweep(worker)) == []
    blocked = dev.get(task.id)
    assert (blocked.status, blocked.reason) == (
        "blocked",
        "its turn died 2 time(s) without finishing",
    )
    assert world.of_type("backlog.task_blocked")[-1].payload["task_id"] == task.id


def test_a_path_smuggling_records_or_options_is_refused_and_only_the_module_lands(
    sqlite_db: Database, tmp_path: Path
) -> None:
    world, dev, _ = _world(sqlite_db, tmp_path)
    task = dev.create_task(world.project.id, "worker", "Notes")
    repo = str(world.repo.repo_path)
    blob = subprocess.run(
        ["git", "-C", repo, "hash-object", "-w", "--stdin"],
        input="evil\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    smuggled = f"worker/notes.md\n100644 {blob}\t.github/workflows/evil.yml"
    tries = [
        ("write_file", {"path": smuggled, "content": "notes\n"}),
        ("write_file", {"path": "worker/--output=x.pth", "content": "x\n"}),
        ("write_file", {"path": "worker/a\x1b]52;c;cHduZWQ=\x07.md", "content": "x\n"}),
    ]
    script = {
        "agents": {
            "dev-worker": [
                {"tool_calls": [{"name": n, "arguments": a} for n, a in tries]},
                {
                    "tool_calls": [
                        {
                            "name": "write_file",
                            "arguments": {"path": "worker/notes.md", "content": "notes\n"},
                        },
                        {"name": "propose_task_pr", "arguments": {"task_id": task.id}},
                    ]
                },
                {"text": "proposed"},
            ]
        }
    }
    agents = DevAgents(_settings(world), dev, scripts=script)
    result = asyncio.run(agents.work(task.id))
    refused = result.tool_results[: len(tries)]
    assert [(r["error"], r["result"]["code"]) for r in refused] == [(True, "invalid_path")] * 3
    messages = [r["result"]["error"] for r in refused]
    assert "control character '\\n'" in messages[0]
    assert "starting with '-'" in messages[1]
    assert "control character '\\x1b'" in messages[2]
    proposed = result.tool_results[-1]
    assert proposed["error"] is False, proposed
    branch = f"feature/task-{task.id}"
    changed = world.git("diff", "--name-only", "-z", f"main...{branch}").split("\0")
    assert [p for p in changed if p] == ["worker/notes.md"]
    tree = world.settings.data_dir / "worktrees" / world.project.id / task.id
    assert sorted(p.name for p in (tree / "worker").iterdir()) == ["README.md", "notes.md"]
