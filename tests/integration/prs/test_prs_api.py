"""``/api/prs/{id}`` for a dev task PR on a real backend (loopback HTTP, real git, real gates),
on SQLite and on PostgreSQL."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_pipeline_support import require_scanners

from backend.settings import load_settings
from tests.integration.api.conftest import Live, live_backend

MODULES = {
    "modules": [{"name": "api", "path": ".", "language": "python", "kind": "service", "port": 8000}]
}


@pytest.fixture(params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Live]:
    """The backend on loopback over SQLite, then over PostgreSQL."""
    url = (
        f"sqlite:///{tmp_path / 'prs.sqlite3'}"
        if request.param == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    settings = load_settings(data_dir=tmp_path / "data", database_url=url, token="test-token-123")
    yield from live_backend(settings)


def _git(repo: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", repo, *args], capture_output=True, text=True, check=False, timeout=30
    )


def _wait(live: Live, pr: str, status: str, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        body = live.http.get(f"/api/prs/{pr}").json()
        if body["gate_status"] == status:
            return body
        time.sleep(0.3)
    raise AssertionError(f"{pr} never reached {status}: {body.get('gate_status')}")


def test_dev_task_pr_is_approved_through_api_prs_and_merged_into_main(live: Live) -> None:
    require_scanners()
    backend = live.backend
    project = live.http.post("/api/projects", json={"name": "loja"}).json()
    backend.store.set_module_map(project["id"], MODULES)
    execution = f"/api/projects/{project['id']}/execution"
    refused = live.http.post(execution, json={"operator": "ana"})
    assert refused.status_code == 409  # the PO has created no task yet
    assert "the PO creates them" in refused.json()["error"]["message"]
    assert not backend.store.project(project["id"]).execution_activated
    session = live.http.post(f"/api/projects/{project['id']}/sessions", json={"title": "s"})
    agents = f"/api/projects/{project['id']}/sessions/{session.json()['id']}/agents"
    idle = live.http.post(f"{agents}/dev-api/turns", json={"text": "oi"})
    assert idle.status_code == 409
    assert "dev-api has no task" in idle.json()["error"]["message"]
    created = backend.dev_tasks.create_task(project["id"], "api", "Document the API")  # the PO's
    started = live.http.post(execution, json={"operator": "ana"})
    assert started.status_code == 200, started.text
    [task] = started.json()["tasks"]
    assert (task["id"], task["status"], task["agent"]) == (created.id, "todo", "dev-api")
    repo = backend.store.project(project["id"]).repo_path

    # The dev-api agent (the offline dev model) works it in its worktree in the background;
    # the backend's one pipeline runs the real gates on its own.
    deadline = time.monotonic() + 60
    while (pr := backend.dev_tasks.get(task["id"]).pr_action_id) is None:
        assert time.monotonic() < deadline, backend.dev_tasks.get(task["id"])
        time.sleep(0.2)
    waiting = _wait(live, pr, "awaiting_human")
    roster = {r["id"]: r for r in live.http.get("/api/roster").json()}
    assert roster["dev-api"]["model"] == "dev-offline"  # what "scripted" means for a dev agent
    assert (waiting["kind"], waiting["task_id"]) == ("dev", task["id"])
    assert waiting["branch"] == f"feature/task-{task['id']}"
    assert [t["status"] for t in waiting["timeline"]] == [
        "awaiting_qa",
        "awaiting_secops",
        "awaiting_human",
    ]
    head = waiting["head"]
    assert _git(repo, "merge-base", "--is-ancestor", head, "main").returncode == 1
    # The operator finds it without knowing its id: the open dev PRs of the project.
    listed = live.http.get("/api/prs", params={"kind": "dev", "project_id": project["id"]})
    assert [(p["id"], p["gate_status"]) for p in listed.json()] == [(pr, "awaiting_human")]
    assert live.http.get("/api/prs", params={"kind": "infra"}).json() == []
    assert live.http.get("/api/prs", params={"kind": "nope"}).status_code == 422
    assert live.http.get(f"/api/prs/{pr}/findings").json() == {"findings": []}
    files = live.http.get(f"/api/prs/{pr}/files").json()
    assert files["kind"] == "dev"
    assert "+- Document the API (by dev-api)" in files["diff"]
    # An operator's turn on dev-api is a normal turn, on its current task.
    turn = live.http.post(f"{agents}/dev-api/turns", json={"text": "say how to run it"})
    assert turn.status_code == 200, turn.text
    assert [r["tool"] for r in turn.json()["tool_results"]][:2] == ["list_files", "read_file"]
    told = [e for e in backend.events.after(0, 10_000) if e.type == "agent.turn"][-1]
    assert (told.agent, told.session_id) == ("dev-api", task["id"])
    assert "The operator says: say how to run it" in told.payload["messages"][0]["text"]

    approved = live.http.post(f"/api/prs/{pr}/approve", json={"operator": "ana"})

    assert approved.status_code == 200, approved.text
    assert (approved.json()["gate_status"], approved.json()["kind"]) == ("merged", "dev")
    assert _git(repo, "merge-base", "--is-ancestor", head, "main").returncode == 0
    assert "Document the API (by dev-api)" in _git(repo, "show", "main:README.md").stdout
    again = live.http.post(f"/api/prs/{pr}/approve", json={"operator": "bia"})
    assert again.status_code == 409
    assert live.http.get("/api/prs", params={"kind": "dev"}).json() == []  # merged: not open
    merged = live.backend.dev_tasks.get(task["id"])
    assert (merged.gate_status, merged.status) == ("merged", "done")
    moves = [
        (e.payload["task_id"], e.payload["gate_status"])
        for e in backend.events.after(0, 10_000)
        if e.type == "pr.gate_changed"
    ]
    assert moves[-1] == (task["id"], "merged")


def _wait_note(live: Live, pr: str, note: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        body = live.http.get(f"/api/prs/{pr}").json()
        if any((t.get("note") or "").startswith(note) for t in body["timeline"]):
            return body
        time.sleep(0.3)
    raise AssertionError(f"{pr} has no {note!r} note: {body.get('timeline')}")


def test_dev_task_pr_rejected_through_api_prs_is_corrected_on_the_same_pr(live: Live) -> None:
    require_scanners()
    backend = live.backend
    project = live.http.post("/api/projects", json={"name": "loja"}).json()
    backend.store.set_module_map(project["id"], MODULES)
    task = backend.dev_tasks.create_task(project["id"], "api", "Document the API")
    pr = backend.dev_tasks.propose_task_pr(task.id, {"README.md": "# loja\n\ndocs\n"}).pr_action_id
    _wait(live, pr, "awaiting_human")

    assert live.http.post(f"/api/prs/{pr}/reject", json={"operator": "ana"}).status_code == 422
    rejected = live.http.post(
        f"/api/prs/{pr}/reject", json={"operator": "ana", "reason": "say how to run it"}
    )

    assert rejected.status_code == 200, rejected.text
    # The dev agent's rule-based fixer cannot act on "say how to run it": its correction
    # has no diff, so it is refused (not committed, not counted) and the PR stays sent back.
    again = _wait_note(live, pr, "no change")
    assert (again["gate_status"], again["gate_correction_count"]) == ("changes_requested", 0)
    assert again["branch"] == f"feature/task-{task.id}"
    assert any(t["actor"] == "ana" for t in again["timeline"])
    backend.pipeline.wait_gates(30)  # the loop that refused it has stopped
    fixed = backend.dev_tasks.propose_task_pr(task.id, {"README.md": "# loja\n\nrun: make\n"})
    assert fixed.pr_action_id == pr
    again = _wait(live, pr, "awaiting_human")  # a real correction, on the same PR
    assert again["gate_correction_count"] == 1
    closed = live.http.post(f"/api/prs/{pr}/close", json={"operator": "ana"}).json()
    assert closed["gate_status"] == "closed"
    alias = live.http.get(f"/api/infra-artifacts/{pr}").json()
    assert (alias["kind"], alias["gate_status"]) == ("dev", "closed")
