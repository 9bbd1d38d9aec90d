"""What the console does, done by an external client (httpx) against a real backend."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import httpx

from backend.erp.seed import upsert_pedidos
from backend.events import EventType
from tests.integration.api.conftest import Live

MESSAGES = [
    "Quero o reembolso do pedido 4821",
    "Já caiu?",
    "Ainda não vi o dinheiro",
    "Faz o estorno de novo",
    "Olá? saiu o reembolso?",
]


def _teto_conversation(live: Live, conversa: str = "conv-api") -> dict:
    upsert_pedidos(
        live.backend.db, [{"pedidoId": "4821", "valorPedido": "129.90", "clienteId": "c-1"}]
    )
    replies = [
        live.http.post(
            f"/api/conversations/{conversa}/messages", json={"text": m, "cliente_id": "c-1"}
        ).json()
        for m in MESSAGES
    ]
    assert replies[0]["attempts"][-1]["resultado"] == "executado"
    assert replies[-1]["attempts"][-1]["resultado"] == "bloqueado_por_teto"
    assert "atendente humano" in replies[-1]["reply"]
    items = live.http.get("/api/approvals").json()["interruptions"]
    assert len(items) == 1
    return items[0]


def test_teto_takeover_claim_race_and_resolve(live: Live) -> None:
    item = _teto_conversation(live)
    assert (item["conversation"], item["entidade"], item["entidade_id"], item["ferramenta"]) == (
        "conv-api",
        "pedidoId",
        "4821",
        "emitir-reembolso",
    )
    assert item["attempt_count"] == 5
    assert item["claimed_by"] is None
    detail = live.http.get(f"/api/interruptions/{item['id']}").json()
    assert [a["tentativaNumero"] for a in detail["attempts"]] == [1, 2, 3, 4, 5]
    assert detail["transcript"][0] == {
        **detail["transcript"][0],
        "role": "cliente",
        "text": MESSAGES[0],
    }
    # resolving before claiming is refused
    early = live.http.post(
        f"/api/interruptions/{item['id']}/resolve",
        json={"operator": "ana", "action": "deny", "reply": "x"},
    )
    assert early.status_code == 409
    with ThreadPoolExecutor(2) as pool:
        results = list(
            pool.map(
                lambda op: live.http.post(
                    f"/api/interruptions/{item['id']}/claim", json={"operator": op}
                ),
                ["ana", "bia"],
            )
        )
    assert sorted(r.status_code for r in results) == [200, 409]
    winner = next(r.json()["claimed_by"] for r in results if r.status_code == 200)
    blocked = live.http.post(
        f"/api/interruptions/{item['id']}/resolve",
        json={"operator": winner, "action": "execute", "reply": "Já foi emitido."},
    )
    # executed under the operator's authority, still through the ledger: never twice, and
    # never reported as done — the takeover stays claimed for another decision
    assert blocked.status_code == 409
    assert blocked.json()["error"]["code"] == "blocked_by_ledger"
    assert blocked.json()["error"]["ledger"]["status"] == "executado"
    still = live.http.get(f"/api/interruptions/{item['id']}").json()
    assert (still["status"], still["claimed_by"]) == ("claimed", winner)
    resolved = live.http.post(
        f"/api/interruptions/{item['id']}/resolve",
        json={"operator": winner, "action": "deny", "reply": "Já foi emitido."},
    ).json()
    assert resolved["outcome"] is None
    assert resolved["interruption"]["status"] == "resolved"
    assert live.http.get("/api/approvals").json()["interruptions"] == []
    assert len(live.backend.guard.simulator.debits()) == 1
    transcript = live.http.get(f"/api/interruptions/{item['id']}").json()["transcript"]
    assert transcript[-1]["role"] == "operador"
    assert transcript[-1]["text"] == "Já foi emitido."


def _infra_pr(live: Live) -> str:
    http = live.http
    project = http.post("/api/projects", json={"name": "loja", "template": "demo"}).json()
    session = http.post(f"/api/projects/{project['id']}/sessions", json={"title": "s1"}).json()
    base = f"/api/projects/{project['id']}/sessions/{session['id']}/agents"
    for agent in ("criativo", "po", "arquiteto"):
        assert http.post(f"{base}/{agent}/turns", json={"text": "vamos"}).status_code == 200
    assert (
        http.post(f"{base}/infra/turns", json={"text": "comece"}).status_code == 409
    )  # no handoff yet
    handoff = http.post(f"{base}/arquiteto/handoff-infra", json={"note": "pronto"}).json()
    assert http.post(f"{base}/arquiteto/handoff-infra", json={}).status_code == 409
    assert (
        http.post(f"/api/handoffs/{handoff['id']}/accept", json={"operator": "ana"}).json()[
            "status"
        ]
        == "accepted"
    )
    assert (
        http.post(f"/api/handoffs/{handoff['id']}/accept", json={"operator": "ana"}).status_code
        == 409
    )
    turn = http.post(f"{base}/infra/turns", json={"text": "comece"}).json()
    return str(turn["tool_results"][0]["result"]["proposal"]["pr_action_id"])


def _wait_status(live: Live, pr: str, status: str, timeout: float = 90) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        art = live.http.get(f"/api/infra-artifacts/{pr}").json()
        if art["gate_status"] == status:
            return art
        time.sleep(0.3)
    raise AssertionError(f"{pr} never reached {status}: {art['gate_status']}")


def test_infra_pr_through_gates_then_one_approval_wins(live_sqlite: Live) -> None:
    live = live_sqlite
    pr = _infra_pr(live)
    art = _wait_status(live, pr, "awaiting_human")
    assert art["branch"] == "feature/infra-setup"
    assert [t["status"] for t in art["timeline"]][-1] == "awaiting_human"
    listed = live.http.get("/api/approvals").json()["infra_prs"]
    assert [p["pr_action_id"] for p in listed] == [pr]
    files = live.http.get(f"/api/infra-artifacts/{pr}/files").json()
    assert any(f["path"].endswith("Dockerfile") for f in files["files"])
    assert "+FROM" in files["diff"]
    assert live.http.get(f"/api/infra-artifacts/{pr}/findings").json() == {"findings": []}
    with ThreadPoolExecutor(2) as pool:
        results = list(
            pool.map(
                lambda op: live.http.post(
                    f"/api/infra-artifacts/{pr}/approve", json={"operator": op}
                ),
                ["ana", "bia"],
            )
        )
    assert sorted(r.status_code for r in results) == [200, 409]
    assert live.http.get(f"/api/infra-artifacts/{pr}").json()["gate_status"] == "merged"
    assert live.http.get("/api/approvals").json()["infra_prs"] == []


def test_reject_sends_the_pr_back_for_a_correction(live_sqlite: Live) -> None:
    live = live_sqlite
    pr = _infra_pr(live)
    _wait_status(live, pr, "awaiting_human")
    rejected = live.http.post(
        f"/api/infra-artifacts/{pr}/reject",
        json={"operator": "ana", "reason": "use a smaller base image"},
    )
    assert rejected.status_code == 200
    # The rule-based planner cannot act on the reason: a correction with no diff is refused
    # (not committed, not counted) and the loop stops with the PR still sent back.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        art = live.http.get(f"/api/infra-artifacts/{pr}").json()
        if any((t.get("note") or "").startswith("no change") for t in art["timeline"]):
            break
        time.sleep(0.3)
    assert (art["gate_status"], art["gate_correction_count"]) == ("changes_requested", 0)
    assert any(t.get("actor") == "ana" for t in art["timeline"])
    kinds = [e["type"] for e in live.http.get("/api/events", params={"limit": 1000}).json()]
    assert "pr.correction_unchanged" in kinds
    assert "infra.pr_corrected" not in kinds


def _sse(live: Live, headers: dict[str, str], n: int) -> list[dict]:
    got: list[dict] = []
    with httpx.stream(
        "GET",
        f"{live.url}/api/events/stream",
        headers={"Authorization": f"Bearer {live.token}", **headers},
        timeout=20,
    ) as response:
        assert response.status_code == 200
        event_id = None
        for line in response.iter_lines():
            if line.startswith("id:"):
                event_id = int(line[3:].strip())
            elif line.startswith("data:") and event_id is not None:
                data = json.loads(line[5:].strip())
                assert data["id"] == event_id
                got.append(data)
                event_id = None
                if len(got) >= n:
                    return got
    return got


def test_sse_resumes_after_last_event_id_without_gap_or_duplicate(live: Live) -> None:
    for i in range(10):
        live.backend.events.append(EventType.BENCH_TICK, {"i": i, "t": 0.0})
    all_ids = [e["id"] for e in live.http.get("/api/events", params={"limit": 1000}).json()]
    resume_at = all_ids[-6]
    got = _sse(live, {"Last-Event-ID": str(resume_at)}, 5)
    assert [e["id"] for e in got] == all_ids[-5:]
    assert all("text" in e for e in got)
