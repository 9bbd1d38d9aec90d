"""The real backend (``create_app``) on loopback, put into the states the console tests need.

Everything here drives the backend through its own HTTP API and objects: projects, agent
turns and the Arquiteto→Infra handoff over HTTP; infra PRs through :class:`InfraPipeline`
and the real gates; customers insisting on a refund until the teto de voltas opens a
takeover. Nothing answers in the backend's place.

Gates cost seconds, so the world is built once per session (:func:`build_world`) and each
test runs on a fresh copy of its data directory (:func:`restore`). While it is built the
clock, the id generator and git's dates are fixed, so snapshot SVGs come out identical.
"""

from __future__ import annotations

import contextlib
import itertools
import shutil
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import uvicorn

from backend.api.app import create_app
from backend.settings import Settings, load_settings
from backend.sla import DEFAULT_SLA

TOKEN = "console-test-token"
T0 = datetime(2025, 11, 29, 12, 0, 0, tzinfo=UTC)
WORLD_SLA = {kind: "36500d" for kind in DEFAULT_SLA}
"""The world's clock is a year behind the wall clock, so on the default SLAs every item
would be breached, paged and (a takeover) told to wait, at whatever moment a background
sweep comes round. Nothing breaches here unless a test asks for it."""
FROZEN_NOW = datetime(2025, 11, 29, 12, 20, 0, tzinfo=UTC)
"""The console's wall clock in tests: a little after everything in the world happened."""

MESSAGES = [
    "Quero o reembolso do pedido {p}",
    "Já caiu?",
    "Ainda não vi o dinheiro do {p}",
    "Pode fazer o estorno de novo?",
    "Olá? O reembolso saiu?",
]
"""Five refund requests: the fifth attempt hits the teto de voltas (4) and opens a takeover."""

DOCKERFILE = (
    "FROM python:3.11.9-slim-bookworm\nWORKDIR /app\nCOPY . .\nUSER 10001\n"
    'CMD ["python", "-m", "app"]\n'
)
COMPOSE = 'services:\n  api:\n    build: .\n    ports:\n      - "127.0.0.1:8000:8000"\n'
FLAWED_DOCKERFILE = (
    "FROM python:latest\nRUN apt-get update && apt-get install -y curl\nCOPY . /app\n"
)
"""Unpinned base, unpinned packages, runs as root: QA requests changes."""


@dataclass(frozen=True)
class World:
    """Ids of what :func:`build_world` created (stable across runs)."""

    pr_ready: str
    """Infra PR corrected once by the Infra agent, now ``awaiting_human``."""
    pr_changes: str
    """Infra PR with QA findings, ``changes_requested``."""
    open_takeover: int
    """Teto de voltas on conversa ``c-17``, nobody on it."""
    claimed_takeover: int
    """Teto de voltas on conversa ``c-21``, claimed by ``bob``."""
    offered_handoff: str
    """Arquiteto → Infra handoff nobody accepted, in a second project also named ``loja``."""
    loja_twin: str
    """That second ``loja`` project's id (the Inbox tells the two apart)."""
    dev_ready: str
    """A dev PR in the first ``loja``, through both gates, ``awaiting_human``."""
    dev_blocked: str
    """A dev PR in the second ``loja`` that failed QA past the correction limit: ``blocked``."""
    adr_approval: str
    """The first ``loja``'s ``open_adr_pr`` (its Arquiteto's turns), held by ``decide()``
    (ask), ``pending``."""


@dataclass
class Live:
    """A running backend: URL, authenticated client, and the backend object itself."""

    url: str
    http: httpx.Client
    app: Any
    settings: Settings

    @property
    def backend(self) -> Any:
        """The :class:`backend.core.Backend` the app runs."""
        return self.app.state.backend

    def agent_status(self, agent: str, detail: str, *, project_id: str | None = None) -> int:
        """One round of real agent work (``agent.status`` working → idle); the last event id."""
        from backend.prs.gating import agent_at_work

        with agent_at_work(self.backend.events, agent, project_id, detail):
            pass
        return int(self.backend.events.last_id())


@contextlib.contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve an ASGI app (lifespan on) with uvicorn on 127.0.0.1:<free port>; yield its URL."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@contextlib.contextmanager
def live_backend(data_dir: Path, sla: dict[str, str] | None = None) -> Iterator[Live]:
    """``create_app(settings)`` on ``data_dir``, served on loopback, with a client; ``sla``
    overrides some of :data:`WORLD_SLA` (a test that wants items breached)."""
    settings = load_settings(data_dir=data_dir, token=TOKEN, sla={**WORLD_SLA, **(sla or {})})
    app = create_app(settings)
    with (
        serve(app) as url,
        httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
        ) as http,
    ):
        yield Live(url, http, app, settings)


def restore(pristine: Path, data_dir: Path) -> None:
    """Put a fresh copy of the built world at ``data_dir`` (the path the world was built at,
    because the database records its repositories by absolute path)."""
    shutil.rmtree(data_dir, ignore_errors=True)
    shutil.copytree(pristine, data_dir, symlinks=True)


def build_world(data_dir: Path) -> World:
    """Drive a fresh backend at ``data_dir`` into the console tests' world, then stop it."""
    with pytest.MonkeyPatch.context() as mp, deterministic(mp), live_backend(data_dir) as live:
        pr_ready = _infra_pr(live, "loja", "Infra: ledger table + roles", ready=True)
        pr_changes = _infra_pr(live, "pagamentos", "Infra: gateway secret", ready=False)
        open_takeover = _teto(live, "c-17", "4821", "129.90")
        claimed_takeover = _teto(live, "c-21", "5120", "89.00")
        claim = live.http.post(
            f"/api/interruptions/{claimed_takeover}/claim", json={"operator": "bob"}
        )
        claim.raise_for_status()
        loja_twin, offered = _offered_handoff(live, "loja")
        loja = live.backend.pipeline.get(pr_ready).project_id
        dev_ready = _dev_pr(live, loja, "Document the API", blocked=False)
        dev_blocked = _dev_pr(live, loja_twin, "Break the build", blocked=True)
        adr = _adr_approval(live, loja)
    return World(
        pr_ready,
        pr_changes,
        open_takeover,
        claimed_takeover,
        offered,
        loja_twin,
        dev_ready,
        dev_blocked,
        adr,
    )


@contextlib.contextmanager
def deterministic(mp: pytest.MonkeyPatch) -> Iterator[None]:
    """Fix the backend's clock (one second per reading), its ids and git's dates."""
    import backend.agents.approvals
    import backend.core
    import backend.demo.runner
    import backend.dev.tasks
    import backend.erp.seed
    import backend.events
    import backend.ledger.base

    del backend  # imported so every module that copied utcnow_iso is loaded now
    ticks = itertools.count()
    lock = threading.Lock()

    def clock() -> datetime:
        with lock:
            return T0 + timedelta(seconds=next(ticks))

    def iso() -> str:
        return clock().isoformat(timespec="milliseconds").replace("+00:00", "Z")

    real = sys.modules["backend.events"].utcnow_iso
    # The job engine's and the on-call sweep's own row stamps are shown nowhere, and they
    # read the clock whenever a tick comes due: on the fixed clock they would shift every
    # time shown.
    stamped = [
        m
        for name, m in sys.modules.items()
        if name.startswith("backend.") and not name.startswith(("backend.jobs", "backend.oncall"))
    ]
    for module in stamped:
        if getattr(module, "utcnow_iso", None) is real:
            mp.setattr(module, "utcnow_iso", iso)
    mp.setattr("backend.ledger.base._now_iso", lambda: clock().isoformat())
    ids = itertools.count(1)
    fixed_uuid = SimpleNamespace(uuid4=lambda: uuid.UUID(int=next(ids) << 80))
    for module in ("backend.agents.store", "backend.agents.approvals"):  # one counter: unique
        mp.setattr(f"{module}.uuid", fixed_uuid)
    for var in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        mp.setenv(var, T0.isoformat())
    yield


def _team_turns(live: Live, name: str) -> tuple[str, str, str]:
    """A project and session through the team's turns: (project, session, agents base)."""
    http = live.http
    project = _ok(http.post("/api/projects", json={"name": name, "template": "empty"}))["id"]
    session = _ok(http.post(f"/api/projects/{project}/sessions", json={"title": "s1"}))["id"]
    base = f"/api/projects/{project}/sessions/{session}/agents"
    for agent in ("criativo", "po", "arquiteto"):
        _ok(http.post(f"{base}/{agent}/turns", json={"text": "vamos"}))
    return project, session, base


def _offered_handoff(live: Live, name: str) -> tuple[str, str]:
    """A project whose Arquiteto offered the Infra handoff; nobody accepted it yet."""
    project, _, base = _team_turns(live, name)
    handoff = _ok(live.http.post(f"{base}/arquiteto/handoff-infra", json={"note": "pronto"}))
    return project, str(handoff["id"])


MODULES = {
    "modules": [{"name": "api", "path": ".", "language": "python", "kind": "service", "port": 8000}]
}
PLANTED = {
    "tool": "hadolint",
    "rule": "DL3007",
    "file": "README.md",
    "line": 1,
    "severity": "error",
    "message": "planted",
}
"""A QA finding the gate records on the dev PR that must end ``blocked``."""


def _dev_pr(live: Live, project_id: str, title: str, *, blocked: bool) -> str:
    """A dev PR of module ``api`` through the one PR pipeline, its verdicts recorded step by
    step (the gates' own runs are the infra PRs' business above)."""
    from backend.prs.actions import PrPipeline
    from backend.prs.proposals import Proposal

    backend = live.backend
    backend.store.set_module_map(project_id, MODULES)
    manual = PrPipeline(backend.store, backend.settings)
    task = backend.dev_tasks.create_task(project_id, "api", title)

    def propose(text: str) -> str:
        proposal = Proposal(
            kind="dev",
            project_id=project_id,
            title=title,
            files={"README.md": text},
            author="dev-api",
            task_id=task.id,
        )
        opened = manual.propose(proposal)
        assert opened.artifact is not None
        return str(opened.artifact.id)

    pr_id = propose("# loja\n\nrun it with `make run`\n")
    if not blocked:
        manual.record_verdict(pr_id, "qa", "pass")
        assert manual.record_verdict(pr_id, "secops", "pass").gate_status == "awaiting_human"
        return pr_id
    for n in range(10):
        pr = manual.record_verdict(pr_id, "qa", "fail", [PLANTED], "planted failure")
        if pr.gate_status == "blocked":
            return pr_id
        propose(f"# try {n}\n")
    raise AssertionError(f"{pr_id} never blocked")


def _adr_approval(live: Live, project_id: str) -> str:
    """The ADR PR the Arquiteto's turns asked to open, held by ``decide()`` (ask)."""
    items = _ok(
        live.http.get("/api/inbox", params={"project_id": project_id, "kind": "action_approval"})
    )
    return str(next(i["target_id"] for i in items if "open_adr_pr" in i["title"]))


def _infra_pr(live: Live, name: str, title: str, *, ready: bool) -> str:
    """A project through the team's turns and the accepted handoff, then its infra PR."""
    from backend.prs.pipeline import InfraPipeline

    http = live.http
    project, session, base = _team_turns(live, name)
    handoff = _ok(http.post(f"{base}/arquiteto/handoff-infra", json={"note": "pronto"}))
    _ok(http.post(f"/api/handoffs/{handoff['id']}/accept", json={"operator": "ana"}))
    # The server's own pipeline corrects in background threads; a step-by-step one over
    # the same store gives the same PR without racing the clock.
    pipeline = InfraPipeline(live.backend.store, live.settings)
    if ready:
        files = {"Dockerfile": DOCKERFILE.replace("3.11.9-slim-bookworm", "latest")}
        files["compose.yaml"] = COMPOSE
        art = pipeline.run_until_settled(project, session, title, files)
        assert art.gate_status == "awaiting_human", art.gate_status
        assert art.gate_correction_count == 1, art.gate_correction_count
    else:
        opened = pipeline.propose_infra_pr(
            project, session, title, {"Dockerfile": FLAWED_DOCKERFILE, "compose.yaml": COMPOSE}
        )
        assert opened.artifact is not None
        art = pipeline.run_gates(opened.artifact.pr_action_id)
        assert art.gate_status == "changes_requested", art.gate_status
        assert art.findings, "the flawed Dockerfile must have findings"
    return art.pr_action_id


def _teto(live: Live, conversa: str, pedido: str, valor: str) -> int:
    """A customer asking for the same refund five times: the fifth is held for a human."""
    from backend.erp.seed import upsert_pedidos

    upsert_pedidos(
        live.backend.db, [{"pedidoId": pedido, "valorPedido": valor, "clienteId": f"c-{pedido}"}]
    )
    for text in MESSAGES:
        _ok(
            live.http.post(
                f"/api/conversations/{conversa}/messages",
                json={"text": text.format(p=pedido), "cliente_id": f"c-{pedido}"},
            )
        )
        _delivered(live, conversa)
    items = _ok(live.http.get("/api/approvals"))["interruptions"]
    return int(next(i["id"] for i in items if i["conversation"] == conversa))


def _delivered(live: Live, conversa: str) -> None:
    """Wait until the agent's reply left for the channel: the delivery worker reads the
    fixed clock too, and must do it between messages, not whenever a thread gets the CPU."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        messages = _ok(live.http.get(f"/api/conversations/{conversa}"))["messages"]
        if all((m["delivery"] or {}).get("status") != "pending" for m in messages):
            return
        time.sleep(0.02)
    raise AssertionError(f"{conversa}: a delivery stayed pending")


def _ok(response: httpx.Response) -> Any:
    assert response.status_code < 300, (response.request.url, response.status_code, response.text)
    return response.json()
