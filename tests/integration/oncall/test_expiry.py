"""Expiry on a real backend, SQLite and PostgreSQL: a held ``decide()`` action and an
offered handoff undecided past ``CADENCIA_EXPIRE`` are denied by ``system`` ("expired"),
recorded like any decision; takeovers, refunds and PRs cannot be set to expire."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.exceptions import ConfigError
from backend.settings import load_settings
from tests.integration.api.conftest import Live, live_backend, live_settings


@pytest.fixture(params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Live]:
    settings = live_settings(
        request,
        tmp_path,
        reconcile_interval_s=3600,
        expire={"action_approval": "1s", "handoff": "1s"},
        oncall_sweep_s=0.2,
    )
    yield from live_backend(settings)


def test_a_held_action_and_a_handoff_expire_as_a_recorded_system_decision(live: Live) -> None:
    store = live.backend.store
    project = store.create_project("loja", module_map=None)
    session = store.create_session(project.id, "s")
    approval = store.request_approval(
        project_id=project.id,
        session_id=session["id"],
        agent="arquiteto",
        action="open_adr_pr",
        payload={"title": "ADR"},
        stage="default",
        rule="open_adr_pr",
    )
    handoff = store.offer_handoff(project.id, session["id"], "arquiteto", "infra", "pronto")
    assert {i["kind"] for i in live.http.get("/api/inbox").json()} == {
        "action_approval",
        "handoff",
    }

    deadline = time.monotonic() + 30
    while live.http.get("/api/inbox").json():
        assert time.monotonic() < deadline, "nothing expired"
        time.sleep(0.1)

    decided = store.approvals.get(approval)
    assert (decided.status, decided.decided_by, decided.reason) == ("rejected", "system", "expired")
    declined = store.handoff(handoff.id)
    assert declined.status == "declined"
    events = live.http.get("/api/events", params={"limit": 1000}).json()
    assert any(e["type"] == "handoff.declined" for e in events)


@pytest.mark.parametrize("kind", ["interruption", "uncertain", "pr", "unanswered"])
def test_what_must_escalate_cannot_be_set_to_expire(kind: str) -> None:
    with pytest.raises(ConfigError, match="cannot expire"):
        load_settings(expire={kind: "5m"})


def test_a_message_no_agent_will_answer_waits_in_the_inbox_until_resume_answers_it(
    live: Live,
) -> None:
    from backend.erp.seed import upsert_pedidos

    upsert_pedidos(
        live.backend.db, [{"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}]
    )
    paused = live.http.post("/api/agents/atendimento/pause", json={"reason": "model upgrade"})
    assert paused.status_code == 200, paused.text
    sent = live.http.post(
        "/api/conversations/conv-wait/messages", json={"text": "oi, alguém?", "cliente_id": "c-1"}
    )
    assert sent.json()["state"] == "paused"

    [item] = [i for i in live.http.get("/api/inbox").json() if i["kind"] == "unanswered"]
    assert item["target_id"] == "conv-wait"
    assert item["sla_state"] in ("ok", "warning", "breached")
    assert item["due_at"]
    [resume] = item["actions"]
    assert (resume["name"], resume["path"]) == ("resume", "/api/agents/atendimento/resume")

    assert live.http.post(resume["path"], json={}).status_code == 200
    deadline = time.monotonic() + 30
    while [i for i in live.http.get("/api/inbox").json() if i["kind"] == "unanswered"]:
        assert time.monotonic() < deadline, "the waiting customer was not answered"
        time.sleep(0.1)
    messages = live.http.get("/api/conversations/conv-wait").json()["messages"]
    assert [m["autor"] for m in messages] == ["cliente", "agente"]  # answered once, not re-asked
