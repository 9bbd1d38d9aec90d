"""A rejection reaches a model-backed author: the correction is a model turn over the real
OpenAI wire format (a loopback server), its ``propose_infra_pr`` call lands as a commit with
a diff on the same PR, and a correction with no diff is refused and stops the loop."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_pipeline_support import planted, require_scanners

from backend import planner
from backend.agents.infra_tools import module_map_of
from backend.settings import load_settings
from tests.integration.api.conftest import Live, live_backend
from tests.openai_server import FakeServer, serve, text, tool_call

MODULES = {
    "modules": [{"name": "api", "path": ".", "language": "python", "kind": "service", "port": 8000}]
}
REASON = "Expose the API on port 9000 and say so in docs/ports.md"


@pytest.fixture
def model() -> Iterator[FakeServer]:
    with serve() as server:
        yield server


@pytest.fixture
def live(model: FakeServer, tmp_path: Path) -> Iterator[Live]:
    """The backend with the Infra agent bound to the loopback OpenAI-compatible server."""
    settings = load_settings(
        data_dir=tmp_path / "data",
        database_url=f"sqlite:///{tmp_path / 'model.sqlite3'}",
        token="test-token-123",
        agent_models={"infra": f"openai:gpt-test@{model.url}"},
        provider_retries=1,  # issue 13: model calls are retried; one retry, no real wait
        provider_backoff_s=0.001,
        provider_backoff_max_s=0.001,
    )
    yield from live_backend(settings)


def _wait(live: Live, pr: str, done: Any, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        body = live.http.get(f"/api/prs/{pr}").json()
        if done(body):
            return body
        time.sleep(0.3)
    raise AssertionError(f"{pr} did not get there: {body.get('gate_status')} {body}")


def _awaiting_human(count: int) -> Any:
    return lambda b: (b["gate_status"], b["gate_correction_count"]) == ("awaiting_human", count)


def _project(live: Live) -> tuple[str, str, str]:
    """A project with a module map and a session whose Arquiteto→Infra handoff is accepted
    (it seeds the Infra agent's autonomy, so ``decide()`` allows its PR)."""
    backend = live.backend
    project = live.http.post("/api/projects", json={"name": "loja"}).json()["id"]
    backend.store.set_module_map(project, MODULES)
    session = live.http.post(f"/api/projects/{project}/sessions", json={"title": "s"}).json()["id"]
    handoff = backend.store.offer_handoff(project, session, "arquiteto", "infra", "ready")
    backend.store.accept_handoff(handoff.id, "ana")
    return project, session, str(backend.store.project(project).repo_path)


def _files_arg(files: dict[str, str]) -> list[dict[str, str]]:
    return [{"path": p, "content": c} for p, c in sorted(files.items())]


def _last_user_message(request: dict[str, Any]) -> str:
    return str([m for m in request["body"]["messages"] if m["role"] == "user"][-1]["content"])


def _diff(repo: str, old: str, new: str) -> str:
    return subprocess.run(
        ["git", "-C", repo, "diff", "--stat", old, new],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout


def test_a_reject_reason_reaches_the_model_and_its_correction_has_a_diff(
    live: Live, model: FakeServer
) -> None:
    require_scanners()
    backend = live.backend
    project, session, repo = _project(live)
    clean = planner.plan(Path(repo), module_map_of(MODULES))

    # The first draft has a planted mistake: the QA gate's findings go to the model.
    model.answer(
        tool_call("call_fix1", "propose_infra_pr", {"title": "Infra", "files": _files_arg(clean)}),
        text("Pinned the base image and dropped root."),
    )
    opened = backend.infra_tools.propose_infra_pr(
        project, session, "Infra", _files_arg(planted(clean))
    )
    pr = opened.artifact.id
    first = opened.artifact.head
    art = _wait(live, pr, _awaiting_human(1))
    found = _last_user_message(model.requests[0])
    assert "DL3007" in found, found
    assert "FROM python:latest" in found, found
    assert "Dockerfile" in _diff(repo, first, art["head"])

    # The operator's reason goes to the model; its propose_infra_pr call is the correction.
    ports = {**clean, "docs/ports.md": "# Ports\n\nThe API listens on 9000.\n"}
    ports["compose.yaml"] = clean["compose.yaml"].replace("8000", "9000")
    model.answer(
        tool_call("call_fix2", "propose_infra_pr", {"title": "Infra", "files": _files_arg(ports)}),
        text("Moved the API to port 9000."),
    )
    before = art["head"]
    rejected = live.http.post(f"/api/prs/{pr}/reject", json={"operator": "ana", "reason": REASON})
    assert rejected.status_code == 200, rejected.text
    art = _wait(live, pr, _awaiting_human(2))
    asked = _last_user_message(model.requests[2])
    assert REASON in asked, asked
    assert "docs/ports.md" in _diff(repo, before, art["head"])
    assert art["branch"] == "feature/infra-setup"
    shown = backend.pipeline.files(pr)
    assert "The API listens on 9000." in shown["diff"]
    assert len(model.requests) == 4  # two turns of two calls each: nothing more

    # A correction with no diff is refused: not committed, not counted, and the loop stops.
    model.answer(
        tool_call("call_same", "propose_infra_pr", {"title": "Infra", "files": _files_arg(ports)}),
        text("Nothing to change."),
    )
    head = art["head"]
    live.http.post(f"/api/prs/{pr}/reject", json={"operator": "ana", "reason": "again, please"})
    art = _wait(
        live,
        pr,
        lambda b: any((t["note"] or "").startswith("no change") for t in b["timeline"]),
    )
    backend.pipeline.wait_gates(30)
    art = live.http.get(f"/api/prs/{pr}").json()
    assert (art["gate_status"], art["gate_correction_count"], art["head"]) == (
        "changes_requested",
        2,
        head,
    )
    assert "again, please" in _last_user_message(model.requests[4])
    tool_result = [m for m in model.requests[5]["body"]["messages"] if m["role"] == "tool"][-1]
    assert '"status": "unchanged"' in tool_result["content"]
    time.sleep(1.0)
    assert len(model.requests) == 6  # the loop stopped instead of asking again
    events = [e for e in backend.events.after(0, 10_000) if e.project_id == project]
    assert [e.payload["correction"] for e in events if e.type == "infra.pr_corrected"] == [1, 2]
    [unchanged] = [e for e in events if e.type == "pr.correction_unchanged"]
    assert (unchanged.payload["pr_action_id"], unchanged.agent) == (pr, "infra")


def test_a_model_turn_that_proposes_nothing_is_a_no_change(live: Live, model: FakeServer) -> None:
    require_scanners()
    backend = live.backend
    project, session, repo = _project(live)
    clean = planner.plan(Path(repo), module_map_of(MODULES))
    pr = backend.infra_tools.propose_infra_pr(
        project, session, "Infra", _files_arg(clean)
    ).artifact.id
    _wait(live, pr, _awaiting_human(0))
    model.answer(text("I do not see what to change."))

    live.http.post(f"/api/prs/{pr}/reject", json={"operator": "ana", "reason": "use alpine"})

    art = _wait(
        live,
        pr,
        lambda b: any((t["note"] or "").startswith("no change") for t in b["timeline"]),
    )
    assert (art["gate_status"], art["gate_correction_count"]) == ("changes_requested", 0)
    assert "use alpine" in _last_user_message(model.requests[0])
    backend.pipeline.wait_gates(30)
    assert len(model.requests) == 1


def test_a_failing_model_leaves_the_pr_with_the_author_and_says_why(
    live: Live, model: FakeServer
) -> None:
    require_scanners()
    backend = live.backend
    project, session, repo = _project(live)
    clean = planner.plan(Path(repo), module_map_of(MODULES))
    pr = backend.infra_tools.propose_infra_pr(project, session, "Infra", _files_arg(clean))
    head = pr.artifact.head
    _wait(live, pr.artifact.id, _awaiting_human(0))
    # The call and its one retry, on each of the gate job's attempts (retried with backoff).
    for _ in range(2 * live.settings.gate_max_attempts):
        model.replies.append(
            (503, {"error": {"message": "overloaded", "type": "server_error"}}, 0.0)
        )

    live.http.post(
        f"/api/prs/{pr.artifact.id}/reject", json={"operator": "ana", "reason": "use alpine"}
    )

    deadline = time.monotonic() + 120
    failed: list[Any] = []
    while time.monotonic() < deadline and not failed:
        failed = [e for e in backend.events.after(0, 10_000) if e.type == "infra.pr_failed"]
        time.sleep(0.3)
    assert failed, "no infra.pr_failed event"
    assert "503" in failed[0].payload["error"], failed[0].payload
    art = live.http.get(f"/api/prs/{pr.artifact.id}").json()
    assert (art["gate_status"], art["gate_correction_count"], art["head"]) == (
        "changes_requested",
        0,
        head,
    )
