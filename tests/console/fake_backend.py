"""An in-memory backend speaking the API contract, served by uvicorn on loopback.

Deterministic data (fixed ids and timestamps) so snapshot tests are stable; knobs to
drop the event stream, refuse reconnects, force a resync, and a log of every request.
"""

from __future__ import annotations

import asyncio
import copy
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from sse_starlette.sse import EventSourceResponse

TOKEN = "test-token"
T0 = "2025-11-29T12:00:00Z"


def _ts(minute: int, second: int = 0) -> str:
    return f"2025-11-29T12:{minute:02d}:{second:02d}Z"


def seed_state() -> dict[str, Any]:
    """The fixed world: 5 agents, 2 infra PRs, 2 teto interruptions, a short history."""
    roster = [
        {
            "id": "arquiteto",
            "role": "Arquiteto",
            "status": "idle",
            "model": "scripted",
            "autonomy": "ask: infra",
            "detail": "architecture ready",
        },
        {
            "id": "infra",
            "role": "Infra",
            "status": "working",
            "model": "scripted",
            "autonomy": "pr: auto",
            "detail": "correcting feature/infra-setup",
        },
        {
            "id": "qa",
            "role": "QA",
            "status": "idle",
            "model": "scripted",
            "autonomy": "gate",
            "detail": "",
        },
        {
            "id": "secops",
            "role": "SecOps",
            "status": "working",
            "model": "scripted",
            "autonomy": "gate",
            "detail": "scanning pr-2",
        },
        {
            "id": "atendimento",
            "role": "Atendimento",
            "status": "blocked",
            "model": "scripted",
            "autonomy": "tools: guarded",
            "detail": "teto de voltas on conversa c-17",
        },
    ]
    base_pr = {
        "project_id": "p1",
        "session_id": "s1",
        "branch": "feature/infra-setup",
        "blocked": False,
        "blocked_reason": None,
    }
    prs = {
        "pa-1": {
            **base_pr,
            "pr_action_id": "pa-1",
            "title": "Infra setup: ledger table + roles",
            "pr_id": "PR-1",
            "pr_url": "http://git.local/pr/1",
            "gate_status": "awaiting_human",
            "gate_correction_count": 1,
            "findings_count": 0,
            "created_at": _ts(1),
            "updated_at": _ts(9),
        },
        "pa-2": {
            **base_pr,
            "pr_action_id": "pa-2",
            "title": "Infra setup: gateway secret",
            "pr_id": "PR-2",
            "pr_url": "http://git.local/pr/2",
            "gate_status": "changes_requested",
            "gate_correction_count": 2,
            "findings_count": 2,
            "created_at": _ts(2),
            "updated_at": _ts(8),
        },
    }
    interruptions = {
        7: {
            "id": 7,
            "conversation": "c-17",
            "pedido": "ped-4411",
            "ferramenta": "reembolsar_pedido",
            "motivo": "teto_de_voltas",
            "argumentos": {"pedidoId": "ped-4411", "valor": 129.9},
            "attempts": 4,
            "status": "open",
            "since": _ts(5),
            "claimed_by": None,
            "resolution": None,
            "reply": None,
        },
        8: {
            "id": 8,
            "conversation": "c-21",
            "pedido": "ped-5120",
            "ferramenta": "cancelar_pedido",
            "motivo": "resultado_incerto",
            "argumentos": {"pedidoId": "ped-5120"},
            "attempts": 2,
            "status": "claimed",
            "since": _ts(6),
            "claimed_by": "bob",
            "resolution": None,
            "reply": None,
        },
    }
    events = [
        {
            "id": i + 1,
            "type": t,
            "ts": _ts(i),
            "project_id": "p1",
            "session_id": "s1",
            "agent": a,
            "payload": p,
        }
        for i, (t, a, p) in enumerate(
            [
                ("agent.status", "arquiteto", {"status": "working", "detail": "drafting"}),
                (
                    "infra.pr_opened",
                    "infra",
                    {"pr_action_id": "pa-1", "branch": "feature/infra-setup"},
                ),
                (
                    "infra.gate_changed",
                    "qa",
                    {
                        "pr_action_id": "pa-1",
                        "from_status": "awaiting_qa",
                        "gate_status": "awaiting_secops",
                    },
                ),
                (
                    "infra.gate_changed",
                    "secops",
                    {
                        "pr_action_id": "pa-1",
                        "from_status": "awaiting_secops",
                        "gate_status": "awaiting_human",
                    },
                ),
                (
                    "interrupcao.aberta",
                    "atendimento",
                    {
                        "interrupcao_id": 7,
                        "conversaId": "c-17",
                        "ferramenta": "reembolsar_pedido",
                        "motivo": "teto_de_voltas",
                    },
                ),
            ]
        )
    ]
    return {"roster": roster, "prs": prs, "interruptions": interruptions, "events": events}


def _activity_text(event: dict[str, Any]) -> str:
    p = event["payload"]
    return f"{event['agent']}: {event['type']} {' '.join(f'{k}={v}' for k, v in p.items())}"


class FakeBackend:
    """State plus the FastAPI app; methods are thread-safe so tests can poke it."""

    def __init__(self, *, ping_s: float = 15.0) -> None:
        self.state = seed_state()
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str, Any]] = []
        self.stream_generation = 0
        self.refuse_streams = False
        self.resync_below = 0
        self.ping_s = ping_s
        self.app = self._build()

    # -- knobs -------------------------------------------------------------------------

    def push(self, type_: str, agent: str | None = None, **payload: Any) -> int:
        """Append an event; open streams deliver it."""
        with self.lock:
            events = self.state["events"]
            event_id = (events[-1]["id"] if events else 0) + 1
            events.append(
                {
                    "id": event_id,
                    "type": type_,
                    "ts": _ts(30, event_id % 60),
                    "project_id": "p1",
                    "session_id": "s1",
                    "agent": agent,
                    "payload": payload,
                }
            )
            if type_ == "agent.status" and agent:
                for entry in self.state["roster"]:
                    if entry["id"] == agent:
                        entry["status"] = payload.get("status", entry["status"])
                        entry["detail"] = payload.get("detail", entry["detail"])
            return event_id

    def drop_streams(self, *, refuse: bool = True) -> None:
        """Close every open stream; keep refusing new ones while ``refuse``."""
        with self.lock:
            self.refuse_streams = refuse
            self.stream_generation += 1

    def calls(self, method: str, prefix: str) -> list[Any]:
        """Bodies of requests matching method and path prefix."""
        return [b for m, p, b in self.requests if m == method and p.startswith(prefix)]

    # -- app ---------------------------------------------------------------------------

    def _build(self) -> FastAPI:
        app = FastAPI()
        fb = self

        @app.middleware("http")
        async def auth_and_log(request: Request, call_next: Any) -> Any:
            body = await request.body()
            fb.requests.append(
                (request.method, request.url.path, json.loads(body) if body else None)
            )
            if (
                request.url.path != "/healthz"
                and request.headers.get("authorization") != f"Bearer {TOKEN}"
            ):
                return _err(401, "unauthenticated", "bad or missing token")
            return await call_next(request)

        @app.get("/healthz")
        def healthz() -> dict[str, str]:
            return {"status": "ok", "version": "0.1.0"}

        @app.get("/api/roster")
        def roster() -> Any:
            with fb.lock:
                return copy.deepcopy(fb.state["roster"])

        @app.get("/api/events")
        def events(after: int = 0, limit: int = 500) -> Any:
            with fb.lock:
                return [e for e in fb.state["events"] if e["id"] > after][:limit]

        @app.get("/api/activity")
        def activity(after: int = 0, limit: int = 500) -> Any:
            with fb.lock:
                chosen = [e for e in fb.state["events"] if e["id"] > after][:limit]
            return [
                {"id": e["id"], "ts": e["ts"], "kind": e["type"], "text": _activity_text(e)}
                for e in chosen
            ]

        @app.get("/api/approvals")
        def approvals() -> Any:
            with fb.lock:
                prs = [
                    p
                    for p in fb.state["prs"].values()
                    if p["gate_status"] not in ("merged", "closed")
                ]
                ints = [i for i in fb.state["interruptions"].values() if i["status"] != "resolved"]
                return {"infra_prs": copy.deepcopy(prs), "interruptions": copy.deepcopy(ints)}

        @app.get("/api/infra-artifacts/{pid}")
        def pr_detail(pid: str) -> Any:
            pr = fb.state["prs"].get(pid)
            if pr is None:
                return _err(404, "not_found", f"no PR {pid}")
            timeline = [
                {"ts": _ts(1), "status": "awaiting_qa", "actor": "infra", "note": "opened"},
                {
                    "ts": _ts(3),
                    "status": "changes_requested",
                    "actor": "qa",
                    "note": "terraform fmt",
                },
                {"ts": _ts(4), "status": "awaiting_qa", "actor": "infra", "note": "correction 1"},
                {"ts": _ts(6), "status": "awaiting_secops", "actor": "qa", "note": "pass"},
                {"ts": _ts(9), "status": "awaiting_human", "actor": "secops", "note": "pass"},
            ]
            return {**pr, "timeline": timeline, "head": "3f9c2ab1d4e5f60718293a4b5c6d7e8f90a1b2c3"}

        @app.get("/api/infra-artifacts/{pid}/files")
        def pr_files(pid: str) -> Any:
            return {
                "files": [
                    {
                        "path": "deploy/terraform/ledger.tf",
                        "content": 'resource "aws_dynamodb_table" "ledger" {\n'
                        '  name         = "cadencia-ledger"\n'
                        '  billing_mode = "PAY_PER_REQUEST"\n}\n',
                    }
                ],
                "diff": "--- a/deploy/terraform/ledger.tf\n+++ b/deploy/terraform/ledger.tf\n"
                '@@ -1,3 +1,4 @@\n resource "aws_dynamodb_table" "ledger" {\n'
                '-  name = "ledger"\n+  name         = "cadencia-ledger"\n'
                '+  billing_mode = "PAY_PER_REQUEST"\n }\n',
            }

        @app.get("/api/infra-artifacts/{pid}/findings")
        def pr_findings(pid: str) -> Any:
            if pid != "pa-2":
                return {"findings": []}
            return {
                "findings": [
                    {
                        "gate": "secops",
                        "tool": "semgrep",
                        "rule": "hardcoded-secret",
                        "file": "deploy/terraform/secret.tf",
                        "line": 12,
                        "severity": "high",
                        "message": "secret value in source",
                    },
                    {
                        "gate": "qa",
                        "tool": "terraform",
                        "rule": "fmt",
                        "file": "deploy/terraform/secret.tf",
                        "line": 3,
                        "severity": "low",
                        "message": "not formatted",
                    },
                ]
            }

        @app.post("/api/infra-artifacts/{pid}/{verb}")
        async def pr_action(pid: str, verb: str, request: Request) -> Any:
            body = await request.json()
            with fb.lock:
                pr = fb.state["prs"].get(pid)
                if pr is None:
                    return _err(404, "not_found", f"no PR {pid}")
                if verb == "approve":
                    if pr["gate_status"] != "awaiting_human":
                        return _err(
                            409,
                            "invalid_transition",
                            f"PR is {pr['gate_status']}, not awaiting_human",
                        )
                    pr["gate_status"] = "merged"
                elif verb == "reject":
                    if not (body.get("reason") or "").strip():
                        return _err(422, "reason_required", "reason required")
                    pr["gate_status"] = "changes_requested"
                else:
                    return _err(404, "not_found", verb)
                pr["updated_at"] = _ts(40)
                result = copy.deepcopy(pr)
            fb.push(
                "infra.gate_changed",
                "operator",
                pr_action_id=pid,
                gate_status=result["gate_status"],
            )
            return result

        @app.get("/api/interruptions/{iid}")
        def int_detail(iid: int) -> Any:
            item = fb.state["interruptions"].get(iid)
            if item is None:
                return _err(404, "not_found", f"no interruption {iid}")
            transcript = [
                {"role": "cliente", "text": "Quero o reembolso do pedido ped-4411", "ts": _ts(2)},
                {"role": "agente", "text": "Vou processar o reembolso agora.", "ts": _ts(2, 5)},
                {
                    "role": "agente",
                    "text": "O gateway não respondeu; tentando de novo.",
                    "ts": _ts(3),
                },
            ]
            attempts = [
                {
                    "tentativaNumero": n,
                    "resultado": r,
                    "timestamp": _ts(3, n * 10),
                    "ferramenta": item["ferramenta"],
                    "pedidoId": item["pedido"],
                    "chaveIdempotencia": f"k-{iid}-{n}",
                }
                for n, r in enumerate(["falha", "falha", "resultado_incerto", "falha"], 1)
            ][: item["attempts"]]
            return {**item, "transcript": transcript, "attempts": attempts}

        @app.post("/api/interruptions/{iid}/claim")
        async def claim(iid: int, request: Request) -> Any:
            body = await request.json()
            with fb.lock:
                item = fb.state["interruptions"].get(iid)
                if item is None:
                    return _err(404, "not_found", f"no interruption {iid}")
                if item["status"] != "open":
                    return _err(409, "already_claimed", f"already claimed by {item['claimed_by']}")
                item.update(status="claimed", claimed_by=body["operator"])
                result = copy.deepcopy(item)
            fb.push("interrupcao.assumida", None, interrupcao_id=iid, operator=body["operator"])
            return result

        @app.post("/api/interruptions/{iid}/resolve")
        async def resolve(iid: int, request: Request) -> Any:
            body = await request.json()
            with fb.lock:
                item = fb.state["interruptions"].get(iid)
                if item is None:
                    return _err(404, "not_found", f"no interruption {iid}")
                if item["status"] != "claimed" or item["claimed_by"] != body.get("operator"):
                    return _err(409, "not_claimed_by_you", "claim it first")
                item.update(status="resolved", resolution=body["action"], reply=body["reply"])
                result = copy.deepcopy(item)
            fb.push(
                "interrupcao.resolvida",
                None,
                interrupcao_id=iid,
                operator=body["operator"],
                action=body["action"],
                reply=body["reply"],
            )
            attempt = (
                {"tentativaNumero": 5, "resultado": "sucesso", "timestamp": _ts(41)}
                if body["action"] == "execute"
                else None
            )
            return {"interruption": result, "attempt": attempt}

        @app.get("/api/events/stream")
        async def stream(request: Request) -> Any:
            if fb.refuse_streams:
                return _err(503, "unavailable", "stream refused (test)")
            raw = request.headers.get("last-event-id")
            cursor = int(raw) if raw and raw.isdigit() else 0
            generation = fb.stream_generation

            async def gen() -> Any:
                nonlocal cursor
                if cursor < fb.resync_below:
                    with fb.lock:
                        last = fb.state["events"][-1]["id"]
                    yield {"event": "resync", "data": json.dumps({"last_id": last})}
                    return
                while fb.stream_generation == generation:
                    with fb.lock:
                        new = [e for e in fb.state["events"] if e["id"] > cursor]
                    for e in new:
                        cursor = e["id"]
                        yield {"id": str(e["id"]), "event": "event", "data": json.dumps(e)}
                    await asyncio.sleep(0.02)

            return EventSourceResponse(gen(), ping=fb.ping_s)

        return app


def _err(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve an ASGI app with uvicorn on 127.0.0.1:<free port> in a thread; yield its URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="auto")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("fake backend did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()


if __name__ == "__main__":  # pragma: no cover - for driving the console by hand in tmux
    import sys

    fake = FakeBackend()
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8799

    def chatter() -> None:
        n = 0
        while True:
            time.sleep(1.5)
            n += 1
            agent = ("arquiteto", "infra", "qa", "secops")[n % 4]
            fake.push("agent.status", agent, status=("working", "idle")[n % 2], detail=f"step {n}")

    threading.Thread(target=chatter, daemon=True).start()
    uvicorn.run(fake.app, host="127.0.0.1", port=port, log_level="warning")
