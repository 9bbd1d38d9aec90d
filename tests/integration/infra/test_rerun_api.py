"""``POST /api/prs/{id}/rerun`` on a real backend (loopback HTTP, real git, real gates), on
SQLite and on PostgreSQL: a stuck gate job is re-queued and the PR leaves the gate; any
other state answers 409, an unknown PR 404, a malformed operator 422 (a missing one is the
token's)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_pipeline_support import CLEAN_FILES, require_scanners

from backend.infra.job_store import JobStore
from backend.infra.pipeline import InfraPipeline
from tests.integration.api.conftest import Live, live_backend, live_settings

LEASE_S = 0.3


@pytest.fixture(params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Live]:
    """A backend whose gate jobs die after one lost lease; its sweep runs only at start."""
    settings = live_settings(
        request, tmp_path, gate_lease_s=LEASE_S, gate_max_attempts=1, gate_sweep_s=3600
    )
    yield from live_backend(settings)


def _until(condition: Callable[[], Any], what: str, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
    return value


def _stuck_pr(live: Live) -> str:
    """An infra PR in awaiting_qa whose only gate job died (its worker never came back)."""
    backend = live.backend
    project = live.http.post("/api/projects", json={"name": "loja"}).json()
    session = live.http.post(f"/api/projects/{project['id']}/sessions", json={"title": "s"}).json()
    handoff = backend.store.offer_handoff(project["id"], session["id"], "arquiteto", "infra")
    backend.store.accept_handoff(handoff.id, "ana")
    # A worker without auto opens the PR and starts nothing: no job exists yet.
    worker = InfraPipeline(backend.store, live.settings)
    opened = worker.propose_infra_pr(project["id"], session["id"], "Infra setup", CLEAN_FILES)
    pr = opened.artifact.pr_action_id
    dead = JobStore(backend.db, lease_s=LEASE_S, max_attempts=1)
    dead.enqueue(pr)
    assert dead.claim(pr, "dead-worker") == 1  # ...and that worker dies mid-run
    _until(lambda: [s.pr.id for s in backend.pipeline.stuck_prs()] == [pr], "the job to be stuck")
    return str(pr)


def test_rerun_requeues_a_stuck_gate_job_and_the_pr_leaves_the_gate(live: Live) -> None:
    require_scanners()
    pr = _stuck_pr(live)
    [stuck] = live.backend.pipeline.stuck_prs()
    assert stuck.pr.gate_status == "awaiting_qa"
    assert "died 1 time(s)" in stuck.reason

    assert live.http.post(f"/api/prs/{pr}/rerun", json={"operator": 5}).status_code == 422
    assert live.http.post(f"/api/prs/{pr}/rerun", json={"operator": " "}).status_code == 422
    answer = live.http.post(f"/api/prs/{pr}/rerun", json={"operator": "ana", "reason": "again"})

    assert answer.status_code == 200, answer.text
    assert answer.json()["id"] == pr
    settled = _until(
        lambda: (
            (b := live.http.get(f"/api/prs/{pr}").json())["gate_status"] == "awaiting_human" and b
        ),
        "the PR to reach awaiting_human",
    )
    assert [t["status"] for t in settled["timeline"]] == [
        "awaiting_qa",
        "awaiting_secops",
        "awaiting_human",
    ]
    assert live.backend.pipeline.stuck_prs() == []
    events = live.http.get("/api/events", params={"limit": 1000}).json()
    [rerun] = [e for e in events if e["type"] == "pr.gates_rerun"]
    assert rerun["payload"]["operator"] == "ana"
    assert rerun["payload"]["reason"] == "again"
    assert rerun["payload"]["job_status"] == "running"  # the dead worker's, lease expired
    activity = live.http.get("/api/activity", params={"limit": 1000}).json()
    assert any(f"ana re-ran the gates of infra PR {pr}" in a["text"] for a in activity)

    # Out of the gate: rerun is refused, on the route and its alias, and nothing changes.
    for path in (f"/api/prs/{pr}/rerun", f"/api/infra-artifacts/{pr}/rerun"):
        refused = live.http.post(path, json={"operator": "ana"})
        assert refused.status_code == 409, refused.text
    assert live.http.get(f"/api/prs/{pr}").json()["gate_status"] == "awaiting_human"
    assert live.http.post("/api/prs/act_nope/rerun", json={"operator": "ana"}).status_code == 404
    after = live.http.get("/api/events", params={"limit": 1000}).json()
    assert [e for e in after if e["type"] == "pr.gates_rerun"] == [rerun]


def test_a_stuck_pr_is_in_the_inbox_with_rerun_and_leaves_it_once_rerun(live: Live) -> None:
    require_scanners()
    pr = _stuck_pr(live)
    inbox = live.http.get("/api/inbox", params={"kind": "pr_stuck"})
    assert inbox.status_code == 200, inbox.text
    [item] = inbox.json()
    assert item["id"] == f"pr_stuck:{pr}"
    assert item["state"] == "awaiting_qa"
    assert item["pr_kind"] == "infra"
    assert "died 1 time(s)" in item["detail"]
    assert [(a["name"], a["path"]) for a in item["actions"]] == [
        ("rerun", f"/api/prs/{pr}/rerun"),
        ("close", f"/api/prs/{pr}/close"),
    ]
    # The stuck PR is more urgent than PRs waiting for review (weight 2 < 4).
    kinds = [i["kind"] for i in live.http.get("/api/inbox").json()]
    assert kinds.index("pr_stuck") == 0

    rerun = next(a for a in item["actions"] if a["name"] == "rerun")
    assert live.http.post(rerun["path"], json={"operator": "ana"}).status_code == 200
    _until(
        lambda: [i["id"] for i in live.http.get("/api/inbox").json()] == [f"pr:{pr}"],
        "the PR to move from pr_stuck to pr in the inbox",
    )
