"""``decide()`` → ask approvals over the real API (loopback uvicorn, real git, real gates).

The Arquiteto runs on an OpenAI-compatible model: a loopback HTTP server speaking the real
chat-completions wire format (the fixture of ``tests/integration/agents``). Approving its
ADR proposal opens the ADR PR, which goes through QA and SecOps and is merged with real
git; rejecting it reaches the model's next request with the operator's reason.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.integration.api.conftest import Live, live_backend, live_settings
from tests.integration.prs.test_pipeline_support import require_scanners
from tests.openai_server import FakeServer, completion, serve


@pytest.fixture
def server() -> Iterator[FakeServer]:
    """The loopback OpenAI-compatible server (the real chat-completions wire format)."""
    with serve() as state:
        yield state


REASON = "Cite the module map and write the decision in English"


@pytest.fixture(params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path: Path, server: FakeServer) -> Iterator[Live]:
    """The backend with the Arquiteto bound to the loopback OpenAI server."""
    settings = live_settings(
        request,
        tmp_path,
        agent_models={"arquiteto": f"openai:gpt-test@{server.url}", "infra": "planner"},
        openai_api_key="sk-test",
    )
    yield from live_backend(settings)


def _tool_call(name: str, arguments: dict[str, Any]) -> tuple[int, Any, float]:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{len(json.dumps(arguments))}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
        "refusal": None,
    }
    return 200, completion(message, "tool_calls"), 0.0


def _text(text: str) -> tuple[int, Any, float]:
    return 200, completion({"role": "assistant", "content": text, "refusal": None}, "stop"), 0.0


def _session(live: Live) -> tuple[str, str]:
    project = live.http.post("/api/projects", json={"name": "loja"}).json()
    session = live.http.post(f"/api/projects/{project['id']}/sessions", json={"title": "s"}).json()
    return project["id"], session["id"]


def _turn(live: Live, project: str, session: str, text: str) -> dict[str, Any]:
    response = live.http.post(
        f"/api/projects/{project}/sessions/{session}/agents/arquiteto/turns", json={"text": text}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


def _ask_for_adr(live: Live, server: FakeServer, project: str, session: str) -> str:
    server.replies += [
        _tool_call(
            "propose_adr_pr",
            {
                "title": "Contêineres por módulo",
                "content": "Cada módulo roda em um contêiner próprio, sem root.",
            },
        ),
        _text("ADR proposto."),
    ]
    turn = _turn(live, project, session, "Registre a decisão de contêineres")
    [called] = turn["tool_results"]
    assert called["error"] is False, called
    assert called["result"]["status"] == "pending"
    return str(called["result"]["approval_id"])


def _user_texts(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["body"]["messages"] if m["role"] == "user"]


def _wait(live: Live, pr: str, status: str, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        body = live.http.get(f"/api/prs/{pr}").json()
        if body["gate_status"] == status:
            return body
        time.sleep(0.2)
    raise AssertionError(f"{pr} never reached {status}: {body.get('gate_status')}")


def test_a_rejected_adr_reaches_the_model_with_the_reason(live: Live, server: FakeServer) -> None:
    project, session = _session(live)
    approval = _ask_for_adr(live, server, project, session)

    detail = live.http.get(f"/api/approvals/{approval}").json()
    assert (detail["status"], detail["action"], detail["agent"]) == (
        "pending",
        "open_adr_pr",
        "arquiteto",
    )
    assert (detail["stage"], detail["rule"]) == ("default", "default: open_adr_pr -> ask")
    assert detail["payload"]["paths"] == ["docs/adr/0001-conteineres-por-modulo.md"]
    [item] = live.http.get("/api/inbox", params={"kind": "action_approval"}).json()
    assert item["target_id"] == approval

    # Bad input changes nothing.
    reject = f"/api/approvals/{approval}/reject"
    assert live.http.post(reject, json={"operator": "ana"}).status_code == 422
    assert live.http.post(reject, json={"operator": "ana", "reason": "  "}).status_code == 422
    assert live.http.post(reject, json={"operator": 7, "reason": "x"}).status_code == 422
    assert (
        live.http.post(
            reject, content=b'{"operator": "ana",', headers={"Content-Type": "application/json"}
        ).status_code
        == 400
    )
    assert (
        live.http.post(
            "/api/approvals/apr_nope/reject", json={"operator": "ana", "reason": "x"}
        ).status_code
        == 404
    )
    assert live.http.get("/api/approvals/apr_nope").status_code == 404
    assert live.http.get(f"/api/approvals/{approval}").json()["status"] == "pending"

    done = live.http.post(reject, json={"operator": "ana", "reason": REASON})
    assert done.status_code == 200, done.text
    body = done.json()
    assert (body["approval"]["status"], body["executed"], body["pr_id"]) == (
        "rejected",
        False,
        None,
    )
    assert (body["approval"]["decided_by"], body["approval"]["reason"]) == ("ana", REASON)
    assert live.http.post(reject, json={"operator": "bia", "reason": "again"}).status_code == 409
    assert (
        live.http.post(f"/api/approvals/{approval}/approve", json={"operator": "bia"}).status_code
        == 409
    )
    assert live.http.get("/api/inbox", params={"kind": "action_approval"}).json() == []
    assert live.http.get("/api/prs", params={"project_id": project}).json() == []

    server.replies.append(_text("Entendido, vou reescrever a ADR."))
    _turn(live, project, session, "E agora?")
    told = [t for t in _user_texts(server.requests[-1]) if REASON in t]
    assert len(told) == 1
    assert "open_adr_pr" in told[0]
    assert "REJECTED by ana" in told[0]
    # Told once: the turn after that carries it only as history, not as a new notice.
    server.replies.append(_text("ok"))
    _turn(live, project, session, "Pronto?")
    assert [t for t in _user_texts(server.requests[-1]) if REASON in t] == told


def _git(repo: str, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", repo, *args], check=True, capture_output=True, text=True, timeout=30
    ).stdout


def test_an_approved_adr_is_opened_gated_and_merged(live: Live, server: FakeServer) -> None:
    require_scanners()
    project, session = _session(live)
    approval = _ask_for_adr(live, server, project, session)
    approve = f"/api/approvals/{approval}/approve"

    # Two operators at once: one executes, the other is told it is taken.
    with ThreadPoolExecutor(2) as pool:
        answers = list(
            pool.map(lambda who: live.http.post(approve, json={"operator": who}), ["ana", "bia"])
        )
    assert sorted(a.status_code for a in answers) == [200, 409]
    [won] = [a.json() for a in answers if a.status_code == 200]
    assert won["executed"] is True
    assert won["approval"]["status"] == "approved"
    assert won["approval"]["result"]["executed"] is True
    pr = won["pr_id"]
    assert pr
    assert live.http.get("/api/prs", params={"project_id": project}).json()[0]["id"] == pr
    decided = [
        e
        for e in live.http.get("/api/events", params={"limit": 1000}).json()
        if e["type"] == "approval.decided"
    ]
    assert [(e["payload"]["outcome"], e["payload"]["pr_id"]) for e in decided] == [("approved", pr)]

    waiting = _wait(live, pr, "awaiting_human")
    assert (waiting["kind"], waiting["branch"]) == ("adr", "adr/0001-conteineres-por-modulo")
    assert waiting["files"] == ["docs/adr/0001-conteineres-por-modulo.md"]
    assert [t["to"] for t in waiting["timeline"]] == [
        "awaiting_qa",
        "awaiting_secops",
        "awaiting_human",
    ]
    [item] = live.http.get("/api/inbox", params={"project_id": project}).json()
    assert (item["kind"], item["pr_kind"], item["target_id"]) == ("pr", "adr", pr)

    merged = live.http.post(f"/api/prs/{pr}/approve", json={"operator": "ana"})
    assert merged.status_code == 200, merged.text
    assert merged.json()["gate_status"] == "merged"
    repo = live.backend.store.project(project).repo_path
    text = _git(str(repo), "show", "main:docs/adr/0001-conteineres-por-modulo.md")
    assert text.startswith("# Contêineres por módulo\n")
    assert live.http.get("/api/inbox", params={"project_id": project}).json() == []

    # The agent's next turn is told what its approval did.
    server.replies.append(_text("Ótimo."))
    _turn(live, project, session, "E a ADR?")
    assert any(f"executed: PR {pr}" in t for t in _user_texts(server.requests[-1]))


MODULES = {
    "modules": [{"name": "api", "path": ".", "language": "python", "kind": "service", "port": 8000}]
}
DOCKERFILE = (
    "FROM python:3.11.9-slim-bookworm\n"
    "WORKDIR /app\n"
    "COPY . .\n"
    "USER 10001\n"
    'CMD ["python", "-m", "app"]\n'
)


def _approve(live: Live, approval: str) -> dict[str, Any]:
    response = live.http.post(f"/api/approvals/{approval}/approve", json={"operator": "ana"})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_approving_an_infra_and_a_dev_proposal_opens_each_pr(live: Live) -> None:
    require_scanners()
    backend = live.backend
    project, session = _session(live)
    # Without the Arquiteto→Infra handoff's autonomy, open_infra_pr asks.
    asked = backend.pipeline.propose_infra_pr(
        project, session, "Infra setup", {"Dockerfile": DOCKERFILE}
    )
    assert (asked.status, asked.artifact) == ("pending", None)
    assert live.http.get("/api/prs", params={"project_id": project}).json() == []
    done = _approve(live, str(asked.approval_id))
    assert (done["executed"], done["approval"]["status"]) == (True, "approved")
    infra = live.http.get(f"/api/prs/{done['pr_id']}").json()
    assert (infra["kind"], infra["session_id"], infra["files"]) == (
        "infra",
        session,
        ["Dockerfile"],
    )
    assert infra["branch"].startswith("feature/infra-setup")
    rules = [
        e["payload"]["rule"]
        for e in live.http.get("/api/events", params={"limit": 1000}).json()
        if e["type"] == "action.decided"
    ]
    assert rules[-1] == f"approved in {asked.approval_id} (default: open_infra_pr -> ask)"

    backend.store.set_module_map(project, MODULES)
    task = backend.dev_tasks.create_task(project, "api", "Document the API")
    dev = backend.store.request_approval(
        project_id=project,
        session_id=None,
        agent="dev-api",
        action="propose_task_pr",
        payload={
            "task_id": task.id,
            "title": task.title,
            "paths": ["README.md"],
            "files": [{"path": "README.md", "content": "# loja\n\nrun it\n"}],
        },
        stage="permissions",
        rule="permissions.json rules[0]",
    )
    done = _approve(live, dev)
    assert done["executed"] is True
    opened = live.http.get(f"/api/prs/{done['pr_id']}").json()
    assert (opened["kind"], opened["task_id"], opened["author"]) == ("dev", task.id, "dev-api")
    assert opened["branch"] == f"feature/task-{task.id}"
    # Both went on through the gates like any PR (and nothing runs after the test).
    for pr in (infra["id"], opened["id"]):
        assert _wait(live, pr, "awaiting_human")["kind"] in ("infra", "dev")


def test_an_approval_that_cannot_run_is_failed_with_its_error_not_approved(live: Live) -> None:
    backend = live.backend
    project, session = _session(live)
    bad = backend.store.request_approval(
        project_id=project,
        session_id=session,
        agent="infra",
        action="open_infra_pr",
        payload={"title": "Infra", "files": [{"path": "../escape", "content": "x"}]},
        stage="default",
        rule="default: open_infra_pr -> ask",
    )
    unknown = backend.store.request_approval(
        project_id=project,
        session_id=session,
        agent="infra",
        action="merge_pr",
        payload={},
        stage="permissions",
        rule="permissions.json rules[0]",
    )
    for approval, error in ((bad, "escape"), (unknown, "merge_pr")):
        done = _approve(live, approval)
        assert (done["executed"], done["pr_id"]) == (False, None)
        assert done["approval"]["status"] == "failed"
        assert error in done["approval"]["result"]["error"]
        assert error in done["message"]
        assert live.http.get(f"/api/approvals/{approval}").json()["status"] == "failed"
        again = live.http.post(f"/api/approvals/{approval}/approve", json={"operator": "bia"})
        assert again.status_code == 409
    assert live.http.get("/api/inbox", params={"kind": "action_approval"}).json() == []
    assert live.http.get("/api/prs", params={"project_id": project}).json() == []
    assert not backend.pipeline.git(project).branch_exists("feature/infra-setup")


def test_a_dependency_failing_is_503_and_the_approval_stays_pending(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, session = _session(live)
    approval = live.backend.store.request_approval(
        project_id=project,
        session_id=session,
        agent="infra",
        action="open_infra_pr",
        payload={"title": "Infra", "files": [{"path": "Dockerfile", "content": DOCKERFILE}]},
        stage="default",
        rule="default: open_infra_pr -> ask",
    )
    with monkeypatch.context() as env:
        env.setenv("PATH", "/nonexistent")  # git cannot run: our dependency is down
        failed = live.http.post(f"/api/approvals/{approval}/approve", json={"operator": "ana"})
    assert failed.status_code == 503, failed.text
    assert "git" in failed.json()["error"]["message"]
    assert failed.headers.get("Retry-After")
    detail = live.http.get(f"/api/approvals/{approval}").json()
    assert (detail["status"], detail["decided_by"], detail["result"]) == ("pending", None, None)
    assert [i["target_id"] for i in live.http.get("/api/inbox").json()] == [approval]
    assert live.http.get("/api/prs", params={"project_id": project}).json() == []
    # Still the operator's to decide (the claim was given back).
    rejected = live.http.post(
        f"/api/approvals/{approval}/reject", json={"operator": "bia", "reason": "later"}
    )
    assert rejected.status_code == 200, rejected.text
    assert rejected.json()["approval"]["status"] == "rejected"


def test_an_adr_asked_with_text_only_opens_its_pr_and_a_claimed_one_is_not_rejected(
    live: Live,
) -> None:
    require_scanners()
    backend = live.backend
    project, session = _session(live)

    def ask(title: str) -> str:
        return backend.store.request_approval(  # the shape asked before ADR PRs had a flow
            project_id=project,
            session_id=session,
            agent="arquiteto",
            action="open_adr_pr",
            payload={"title": title, "content": "Decidido."},
            stage="default",
            rule="default: open_adr_pr -> ask",
        )

    busy, legacy = ask("Filas"), ask("Um banco por módulo")
    backend.store.approvals.claim(busy, "ana")  # ana is executing it right now
    taken = live.http.post(
        f"/api/approvals/{busy}/reject", json={"operator": "bia", "reason": "no"}
    )
    assert taken.status_code == 409
    assert "being executed by ana" in taken.json()["error"]["message"]

    done = _approve(live, legacy)
    assert done["executed"] is True
    pr = _wait(live, str(done["pr_id"]), "awaiting_human")
    assert (pr["kind"], pr["files"]) == ("adr", ["docs/adr/0001-um-banco-por-modulo.md"])
