"""A gate job that died for good, on a real backend (loopback HTTP, real git, real gates),
on SQLite and on PostgreSQL: it is a ``job_dead`` inbox item; ``POST /api/prs/{id}/rerun``
and the item's own rerun queue it again and the PR leaves the gate; drop gives up on it;
any other state answers 409, an unknown PR or job 404, a malformed operator 422 (a missing
one is the token's)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_pipeline_support import CLEAN_FILES, require_scanners

from backend.prs.pipeline import InfraPipeline
from tests.integration.api.conftest import Live, live_backend, live_settings


@pytest.fixture(params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Live]:
    """A backend whose gate jobs are dead after one failed attempt."""
    settings = live_settings(request, tmp_path, gate_max_attempts=1)
    yield from live_backend(settings)


def _until(condition: Callable[[], Any], what: str, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
    return value


def _dead_gate_job(live: Live) -> tuple[str, int]:
    """An infra PR in awaiting_qa whose gate job failed its only attempt: (PR, job id)."""
    backend = live.backend
    project = live.http.post("/api/projects", json={"name": "loja"}).json()
    session = live.http.post(f"/api/projects/{project['id']}/sessions", json={"title": "s"}).json()
    handoff = backend.store.offer_handoff(project["id"], session["id"], "arquiteto", "infra")
    backend.store.accept_handoff(handoff.id, "ana")
    # A worker without auto opens the PR and starts nothing: no job exists yet.
    worker = InfraPipeline(backend.store, live.settings)
    opened = worker.propose_infra_pr(project["id"], session["id"], "Infra setup", CLEAN_FILES)
    pr = str(opened.artifact.pr_action_id)
    repo = Path(backend.store.project(project["id"]).repo_path)
    away = repo.with_name(repo.name + "-away")
    shutil.move(repo, away)  # the run cannot read the PR's files back: it raises
    try:
        backend.pipeline.start_gates(pr)
        [job] = _until(lambda: backend.dead_jobs.all(), "the gate job to be dead")
    finally:
        shutil.move(away, repo)
    assert job.payload == {"pr_id": pr}
    return pr, job.id


def test_rerun_requeues_a_stuck_gate_job_and_the_pr_leaves_the_gate(live: Live) -> None:
    require_scanners()
    pr, _job = _dead_gate_job(live)
    assert live.http.get(f"/api/prs/{pr}").json()["gate_status"] == "awaiting_qa"

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
    assert live.backend.dead_jobs.all() == []
    events = live.http.get("/api/events", params={"limit": 1000}).json()
    [rerun] = [e for e in events if e["type"] == "pr.gates_rerun"]
    assert rerun["payload"]["operator"] == "ana"
    assert rerun["payload"]["reason"] == "again"
    assert rerun["payload"]["job_status"] == "dead"
    assert rerun["payload"]["job_error"]  # why it died
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


def test_a_dead_gate_job_is_in_the_inbox_with_rerun_and_leaves_it_once_rerun(
    live: Live,
) -> None:
    require_scanners()
    pr, job = _dead_gate_job(live)
    inbox = live.http.get("/api/inbox", params={"kind": "job_dead"})
    assert inbox.status_code == 200, inbox.text
    [item] = inbox.json()
    assert item["id"] == f"job_dead:{job}"
    assert item["state"] == "dead"
    assert item["pr_kind"] == "infra"
    assert pr in item["title"]
    assert "out of attempts (1/1)" in item["detail"]
    assert [(a["name"], a["path"]) for a in item["actions"]] == [
        ("rerun", f"/api/jobs/{job}/rerun"),
        ("drop", f"/api/jobs/{job}/drop"),
    ]
    # The dead job is more urgent than PRs waiting for review (weight 2 < 4).
    kinds = [i["kind"] for i in live.http.get("/api/inbox").json()]
    assert kinds.index("job_dead") == 0

    rerun = next(a for a in item["actions"] if a["name"] == "rerun")
    answer = live.http.post(rerun["path"], json={"operator": "ana", "reason": "git is back"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["state"] == "queued"
    _until(
        lambda: [i["id"] for i in live.http.get("/api/inbox").json()] == [f"pr:{pr}"],
        "the PR to move from job_dead to pr in the inbox",
    )
    events = live.http.get("/api/events", params={"limit": 1000}).json()
    [dead] = [e for e in events if e["type"] == "job.dead"]
    assert (dead["payload"]["job_id"], dead["payload"]["kind"]) == (job, "gates")
    [again] = [e for e in events if e["type"] == "job.rerun"]
    assert (again["payload"]["operator"], again["payload"]["reason"]) == ("ana", "git is back")
    # Not dead any more: a second rerun changes nothing.
    assert live.http.post(rerun["path"], json={"operator": "ana"}).status_code == 409


def test_a_dropped_job_leaves_the_inbox_and_bad_requests_change_nothing(live: Live) -> None:
    require_scanners()
    pr, job = _dead_gate_job(live)
    assert live.http.post("/api/jobs/999999/drop", json={"operator": "ana"}).status_code == 404
    assert live.http.post("/api/jobs/0/drop", json={"operator": "ana"}).status_code == 422
    assert live.http.post("/api/jobs/x/drop", json={"operator": "ana"}).status_code == 422
    assert live.http.post(f"/api/jobs/{job}/drop", json={"operator": 5}).status_code == 422
    assert live.http.post(f"/api/jobs/{job}/drop", content=b"{").status_code in (400, 422)
    assert [j.id for j in live.backend.dead_jobs.all()] == [job]  # none of that changed it

    answer = live.http.post(f"/api/jobs/{job}/drop", json={"operator": "ana", "reason": "moot"})

    assert answer.status_code == 200, answer.text
    assert answer.json()["state"] == "cancelled"
    assert live.http.get("/api/inbox", params={"kind": "job_dead"}).json() == []
    assert live.http.post(f"/api/jobs/{job}/drop", json={"operator": "ana"}).status_code == 409
    events = live.http.get("/api/events", params={"limit": 1000}).json()
    [dropped] = [e for e in events if e["type"] == "job.dropped"]
    assert (dropped["payload"]["operator"], dropped["payload"]["reason"]) == ("ana", "moot")
    assert live.http.get(f"/api/prs/{pr}").json()["gate_status"] == "awaiting_qa"
