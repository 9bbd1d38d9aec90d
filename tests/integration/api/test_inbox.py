"""``GET /api/inbox`` over the real API (loopback uvicorn, real git), SQLite and PostgreSQL:
each kind appears with exactly its actions, in urgency order, and each action moves it."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backend.erp.seed import upsert_pedidos
from backend.prs.actions import PrPipeline
from backend.prs.proposals import Proposal
from tests.integration.api.conftest import ASKS, Live, live_backend, live_settings

MODULES = {
    "modules": [{"name": "api", "path": ".", "language": "python", "kind": "service", "port": 8000}]
}
FINDING = {
    "tool": "hadolint",
    "rule": "DL3007",
    "file": "README.md",
    "line": 1,
    "severity": "error",
    "message": "planted",
}


@pytest.fixture(params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Live]:
    settings = live_settings(request, tmp_path, reconcile_interval_s=3600, gateway_timeout_s=0.3)
    for running in live_backend(settings):
        upsert_pedidos(
            running.backend.db,
            [
                {"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"},
                {"pedidoId": "7000", "valorPedido": "50.00", "clienteId": "c-2"},
            ],
        )
        yield running


def _inbox(live: Live, **params: str) -> list[dict[str, Any]]:
    response = live.http.get("/api/inbox", params=params)
    assert response.status_code == 200, response.text
    return list(response.json())


def _by_kind(items: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [i for i in items if i["kind"] == kind]


def _actions(item: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(a["name"], a["path"], a["reason"]) for a in item["actions"]]


def _project(live: Live, name: str) -> dict[str, Any]:
    project = live.http.post("/api/projects", json={"name": name}).json()
    live.backend.store.set_module_map(project["id"], MODULES)
    return dict(project)


def _dev_pr(live: Live, manual: PrPipeline, project_id: str, title: str, text: str) -> str:
    """A dev PR opened through the (manual) pipeline; gates are recorded by the test."""
    task = live.backend.dev_tasks.create_task(project_id, "api", title)
    result = manual.propose(
        Proposal(
            kind="dev",
            project_id=project_id,
            title=title,
            files={"README.md": text},
            author="dev-api",
            task_id=task.id,
        )
    )
    assert result.artifact is not None
    return result.artifact.id


def _to_awaiting_human(manual: PrPipeline, pr_id: str) -> None:
    manual.record_verdict(pr_id, "qa", "pass")
    assert manual.record_verdict(pr_id, "secops", "pass").gate_status == "awaiting_human"


def _to_blocked(live: Live, manual: PrPipeline, project_id: str, pr_id: str) -> None:
    pr = manual.get(pr_id)
    for n in range(10):
        pr = manual.record_verdict(pr_id, "qa", "fail", [FINDING], "planted failure")
        if pr.gate_status == "blocked":
            return
        manual.propose(
            Proposal(
                kind="dev",
                project_id=project_id,
                title=pr.title,
                files={"README.md": f"# try {n}\n"},
                author="dev-api",
                task_id=pr.task_id,
            )
        )
    raise AssertionError(f"{pr_id} never blocked: {pr.gate_status}")


def _teto_takeover(live: Live, conversa: str) -> None:
    for text in ASKS:
        assert live.http.post(
            f"/api/conversations/{conversa}/messages", json={"text": text, "cliente_id": "c-1"}
        ).is_success


def _uncertain_refund(live: Live) -> None:
    live.backend.guard.simulator.fail_next("timeout_after_debit", delay_s=1.0)
    live.http.post(
        "/api/conversations/conv-tmo/messages",
        json={"text": "Quero o reembolso do pedido 7000", "cliente_id": "c-2"},
    )


def test_every_kind_is_listed_with_its_actions_most_urgent_first(live: Live) -> None:
    backend = live.backend
    manual = PrPipeline(backend.store, backend.settings)
    project = _project(live, "loja")
    twin = _project(live, "loja")  # same name: project_id and project_name tell them apart
    ready = _dev_pr(live, manual, project["id"], "Document the API", "# loja\n\nrun it\n")
    _to_awaiting_human(manual, ready)
    stuck = _dev_pr(live, manual, twin["id"], "Break the build", "# broken\n")
    _to_blocked(live, manual, twin["id"], stuck)
    session = backend.store.create_session(project["id"], "s1")
    approval = backend.store.request_approval(
        project_id=project["id"],
        session_id=session["id"],
        agent="arquiteto",
        action="open_adr_pr",
        payload={"title": "ADR — one container per module", "content": "Decided."},
        stage="default",
        rule="default: open_adr_pr -> ask",
    )
    handoff = backend.store.offer_handoff(project["id"], session["id"], "arquiteto", "infra")
    _teto_takeover(live, "conv-teto")
    _uncertain_refund(live)

    items = _inbox(live)
    assert [i["kind"] for i in items] == [
        "interruption",
        "uncertain",
        "action_approval",
        "pr",
        "pr_blocked",
        "handoff",
    ]
    assert len({i["id"] for i in items}) == len(items)
    assert all(i["id"] == f"{i['kind']}:{i['target_id']}" for i in items)
    assert all(i["since"].endswith("Z") and i["age_s"] >= 0 for i in items)
    [takeover] = _by_kind(items, "interruption")
    ident = takeover["target_id"]
    assert (takeover["state"], takeover["project_id"]) == ("open", None)
    assert _actions(takeover) == [
        ("claim", f"/api/interruptions/{ident}/claim", "none"),
        ("resolve", f"/api/interruptions/{ident}/resolve", "optional"),
        ("grant", f"/api/interruptions/{ident}/grant", "required"),
    ]
    [uncertain] = _by_kind(items, "uncertain")
    key = uncertain["target_id"]
    assert uncertain["state"] == "resultado_incerto"
    assert "7000" in uncertain["title"]
    assert _actions(uncertain) == [
        ("reconcile", f"/api/uncertain/{key}/reconcile", "none"),
        ("settle", f"/api/uncertain/{key}/settle", "required"),
    ]
    [asked] = _by_kind(items, "action_approval")
    assert (asked["target_id"], asked["state"], asked["project_id"]) == (
        approval,
        "pending",
        project["id"],
    )
    assert "open_adr_pr" in asked["title"]
    assert "default" in asked["detail"]
    assert _actions(asked) == [
        ("approve", f"/api/approvals/{approval}/approve", "optional"),
        ("reject", f"/api/approvals/{approval}/reject", "required"),
    ]
    [pr] = _by_kind(items, "pr")
    assert (pr["target_id"], pr["state"], pr["pr_kind"]) == (ready, "awaiting_human", "dev")
    assert (pr["project_id"], pr["project_name"]) == (project["id"], "loja")
    assert _actions(pr) == [
        ("approve", f"/api/prs/{ready}/approve", "optional"),
        ("reject", f"/api/prs/{ready}/reject", "required"),
        ("close", f"/api/prs/{ready}/close", "optional"),
    ]
    [blocked] = _by_kind(items, "pr_blocked")
    assert (blocked["target_id"], blocked["state"]) == (stuck, "blocked")
    assert (blocked["project_id"], blocked["project_name"]) == (twin["id"], "loja")
    assert _actions(blocked) == [
        ("unblock", f"/api/prs/{stuck}/unblock", "optional"),
        ("close", f"/api/prs/{stuck}/close", "optional"),
    ]
    [offered] = _by_kind(items, "handoff")
    assert (offered["target_id"], offered["state"]) == (handoff.id, "offered")
    assert _actions(offered) == [
        ("accept", f"/api/handoffs/{handoff.id}/accept", "none"),
        ("decline", f"/api/handoffs/{handoff.id}/decline", "optional"),
    ]

    # Every action names a POST route that exists in the API's own contract.
    spec = live.http.get("/openapi.json").json()["paths"]
    routes = [
        re.compile("^" + re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(path)) + "$")
        for path, ops in spec.items()
        if "post" in ops
    ]
    for item in items:
        for action in item["actions"]:
            assert action["method"] == "POST"
            assert any(r.match(action["path"]) for r in routes), action

    # Filters: one project (customer-service items belong to none), one kind.
    assert [i["kind"] for i in _inbox(live, project_id=twin["id"])] == ["pr_blocked"]
    assert [i["id"] for i in _inbox(live, kind="pr")] == [f"pr:{ready}"]
    assert _inbox(live, kind="pr_stuck") == []

    # Every action changes state, and the item leaves the inbox.
    def post(action: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        [route] = [a for a in items_of(action["kind"])[0]["actions"] if a["name"] == body["_a"]]
        payload = {k: v for k, v in body.items() if k != "_a"}
        response = live.http.post(route["path"], json=payload)
        assert response.status_code == 200, response.text
        return dict(response.json())

    def items_of(kind: str) -> list[dict[str, Any]]:
        return _by_kind(_inbox(live), kind)

    assert post(pr, {"_a": "approve", "operator": "ana"})["gate_status"] == "merged"
    repo = str(backend.store.project(project["id"]).repo_path)
    merged = subprocess.run(
        ["git", "-C", repo, "show", "main:README.md"], capture_output=True, text=True, check=True
    )
    assert merged.stdout == "# loja\n\nrun it\n"  # the dev PR's change is on main
    assert post(blocked, {"_a": "unblock", "operator": "ana"})["gate_status"] == "changes_requested"
    assert post(offered, {"_a": "decline", "operator": "ana", "reason": "not yet"})["status"] == (
        "declined"
    )
    claimed = post(takeover, {"_a": "claim", "operator": "ana"})
    assert claimed["status"] == "claimed"
    assert items_of("interruption")[0]["state"] == "claimed"
    settled = post(
        uncertain, {"_a": "settle", "operator": "ana", "outcome": "executado", "reason": "seen"}
    )
    assert settled["settled"] is True
    rejected = post(asked, {"_a": "reject", "operator": "ana", "reason": "write it in English"})
    assert rejected["approval"]["status"] == "rejected"
    assert [i["kind"] for i in _inbox(live)] == ["interruption"]


def test_a_pr_whose_author_made_no_change_is_stuck_in_the_inbox_until_closed(live: Live) -> None:
    """A reject the rule-based author cannot act on leaves the PR in changes_requested with
    "no change": nothing moves it on its own, so the inbox shows it (close is the way out)."""
    manual = PrPipeline(live.backend.store, live.settings)
    project = _project(live, "loja")
    pr = _dev_pr(live, manual, project["id"], "docs", "# docs\n")
    _to_awaiting_human(manual, pr)
    rejected = live.http.post(
        f"/api/prs/{pr}/reject", json={"operator": "ana", "reason": "rename the module to loja"}
    )
    assert rejected.status_code == 200, rejected.text
    assert manual.correct(pr).status == "unchanged"  # the rule-based fixer has nothing to fix

    [item] = _inbox(live, kind="pr_stuck")
    assert item["id"] == f"pr_stuck:{pr}"
    assert item["state"] == "changes_requested"
    assert item["detail"].startswith("the author made no change: no change")
    assert _actions(item) == [("close", f"/api/prs/{pr}/close", "optional")]
    assert _by_kind(_inbox(live), "pr") == []  # not waiting for review

    closed = live.http.post(item["actions"][0]["path"], json={"operator": "ana"})
    assert closed.status_code == 200, closed.text
    assert _inbox(live, kind="pr_stuck") == []


@pytest.mark.parametrize("dialect", ["sqlite"])
def test_every_item_has_a_deadline_and_breached_ones_come_first(
    request: pytest.FixtureRequest, tmp_path: Path, dialect: str
) -> None:
    request.param = dialect  # type: ignore[attr-defined]  # what live_settings reads
    from datetime import datetime, timedelta

    settings = live_settings(
        request, tmp_path, reconcile_interval_s=3600, sla={"pr": "0s", "interruption": "1d"}
    )
    for live in live_backend(settings):
        upsert_pedidos(
            live.backend.db, [{"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}]
        )
        _teto_takeover(live, "conv-sla")
        manual = PrPipeline(live.backend.store, live.backend.settings)
        project = _project(live, "loja")
        ready = _dev_pr(live, manual, project["id"], "Document the API", "# loja\n")
        _to_awaiting_human(manual, ready)

        items = _inbox(live)

        # The PR is past its (zero) SLA, so it comes before the takeover, whose kind
        # alone would put it first.
        assert [(i["kind"], i["sla_state"]) for i in items] == [
            ("pr", "breached"),
            ("interruption", "ok"),
        ]
        for item, sla in zip(items, (timedelta(0), timedelta(days=1)), strict=True):
            since = datetime.fromisoformat(item["since"].replace("Z", "+00:00"))
            due = datetime.fromisoformat(item["due_at"].replace("Z", "+00:00"))
            assert abs(due - (since + sla)) < timedelta(milliseconds=2), item
        # A page of one continues with the next item, in the same order.
        first = live.http.get("/api/inbox", params={"limit": 1})
        rest = live.http.get(first.links["next"]["url"])
        assert [i["id"] for i in first.json() + rest.json()] == [i["id"] for i in items]
