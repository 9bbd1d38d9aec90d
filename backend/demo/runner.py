"""``--demo``: a sample multi-module project, the team pipeline and a customer refund
loop, all live, so a new user sees the whole product move within the first minute.

Everything runs through the same code paths as real work: scripted models for the
conversational agents, the rule-based infra planner, real git, the real gate scanners,
and the guard with its ledger. The only scripted shortcut is the operator's acceptance
of the Arquiteto→Infra handoff, recorded as ``demo (auto-accepted)``.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.agents.team import ARQUITETO, CRIATIVO, PO
from backend.dev.tasks import seed_demo_tasks
from backend.erp.seed import upsert_pedidos
from backend.exceptions import CadenciaError
from backend.prs.git import GitProvider

if TYPE_CHECKING:
    from backend.agents.store import Project
    from backend.core import Backend

log = logging.getLogger(__name__)

DEMO_OPERATOR = "demo (auto-accepted)"
DEMO_PROJECT = "loja-demo"
PACE_S = 1.0
"""Pause between demo steps: slow enough for an operator to watch the roster change."""

CONVERSAS = [
    (
        "conv-demo",
        "4821",
        "129.90",
        [
            "Quero o reembolso do pedido 4821",
            "Já caiu?",
            "Ainda não vi o dinheiro do 4821",
            "Pode fazer o estorno de novo?",
            "Olá? O reembolso saiu?",
        ],
    ),
    (
        "conv-demo-b",
        "5107",
        "89.00",
        ["Qual o status do pedido 5107?", "E o reembolso do 5107, por favor"],
    ),
]


def create_project_repo(backend: Backend, name: str, template: str = "empty") -> Project:
    """Create a project whose repository lives in the data dir (never a client-chosen path)."""
    project = backend.store.create_project(name)
    repo = backend.settings.data_dir / "repos" / project.id
    repo.mkdir(parents=True, exist_ok=True)
    if template == "demo":
        sample = resources.files("backend.demo").joinpath("sample")
        with resources.as_file(sample) as src:
            shutil.copytree(Path(src), repo, dirs_exist_ok=True)
    else:
        (repo / "README.md").write_text(f"# {name}\n", encoding="utf-8")
    GitProvider(repo).ensure_repo()
    with backend.db.transaction() as tx:
        tx.execute("project_set_repo", {"repo": str(repo), "id": project.id})
    return backend.store.project(project.id)


def demo_project(backend: Backend) -> tuple[Project, bool]:
    """The demo's project and whether it is new: an earlier demo's ``loja-demo`` on this data
    dir (its repository in the data dir) is reused, so restarting the demo does not add a
    second project of the same name."""
    repos = (backend.settings.data_dir / "repos").resolve()
    for project in backend.store.projects():
        if project.name == DEMO_PROJECT and project.repo_path:
            repo = Path(project.repo_path).resolve()
            if repo.parent == repos and (repo / ".git").exists():
                return project, False
    return create_project_repo(backend, DEMO_PROJECT, "demo"), True


async def run_demo(backend: Backend, *, pace_s: float = PACE_S) -> dict[str, Any]:
    """The whole demo; returns ids of what it created.

    On a data dir an earlier demo used, the story plays again in a new session of the same
    project: its own infra PR (on a branch of its own), its own customers.
    """
    project, new = await asyncio.to_thread(demo_project, backend)
    title = "fase 4a — demo" if new else "fase 4a — demo (again)"
    session = await asyncio.to_thread(backend.store.create_session, project.id, title)
    sid = session["id"]
    # Conversations are new on every run, so a second demo on the same data dir shows the
    # whole story again instead of continuing yesterday's customers.
    run = f"{int(sid[-4:], 16) % 1000:03d}"
    customer = backend.spawn(_customer_demo(backend, pace_s, run), "demo-customers")
    # The Arquiteto's module map comes before the PO's tasks (a task belongs to a module),
    # and the infra PR before them, so its gates run first.
    for agent_id, text in (
        (CRIATIVO, "Quero uma loja com API, site e worker de reembolsos."),
        (ARQUITETO, "Defina os módulos e registre a decisão."),
    ):
        await backend.team.agent_turn(project.id, sid, agent_id, text)
        await asyncio.sleep(pace_s)
    handoff = await backend.team.offer_infra_handoff(project.id, sid)
    await asyncio.sleep(pace_s)
    await backend.team.accept_handoff(handoff.id, DEMO_OPERATOR)
    await backend.tools_ready.wait()  # the start-up scanner check has run (and logged a gap)
    await _infra_with_one_correction(backend, project.id, sid)
    await backend.team.agent_turn(project.id, sid, PO, "Quebre em histórias e tarefas.")
    project = await asyncio.to_thread(backend.store.project, project.id)
    if not project.execution_activated:  # an earlier run activated it already
        project = await asyncio.to_thread(backend.store.activate_execution, project.id)
    # The PO's tasks, plus a demo task for a module it gave none; the dev worker runs the
    # dev agents (offline model) on them like on any project's tasks.
    await asyncio.to_thread(seed_demo_tasks, backend.dev_tasks, project)
    await asyncio.to_thread(backend.dev_worker.wake)
    await customer
    return {"project_id": project.id, "session_id": sid, "handoff_id": handoff.id, "new": new}


async def _infra_with_one_correction(backend: Backend, project_id: str, session_id: str) -> None:
    """The Infra agent's first draft has one mistake (an unpinned base image) so the demo
    shows the gates requesting changes and the correction landing on the same PR."""
    from backend import planner
    from backend.agents.infra_tools import module_map_of

    ctx_status = backend.team.runtime._status
    from backend.agents.runtime import TurnContext

    ctx = TurnContext(project_id, session_id, "infra")
    await ctx_status(ctx, "working", "planning Dockerfiles, compose and CI")
    try:
        project = await asyncio.to_thread(backend.store.project, project_id)
        files = await asyncio.to_thread(
            planner.plan, Path(str(project.repo_path)), module_map_of(project.module_map)
        )
        draft = dict(files)
        first_dockerfile = min(p for p in draft if p.endswith("Dockerfile"))
        lines = draft[first_dockerfile].splitlines()
        for i, line in enumerate(lines):
            if line.startswith("FROM "):
                parts = line.split()
                parts[1] = parts[1].split("@")[0].split(":")[0] + ":latest"
                lines[i] = " ".join(parts)
                break
        draft[first_dockerfile] = "\n".join(lines) + "\n"
        await asyncio.to_thread(
            backend.infra_tools.propose_infra_pr,
            project_id,
            session_id,
            "Infra: Dockerfiles, compose e CI",
            [{"path": p, "content": c} for p, c in draft.items()],
        )
    finally:
        await ctx_status(ctx, "idle", "")


async def _customer_demo(backend: Backend, pace_s: float, run: str) -> None:
    """Customers insisting on refunds until the teto de voltas hands one to a human."""

    def order(pedido: str) -> str:
        return f"{pedido}{run}"

    await asyncio.to_thread(
        upsert_pedidos,
        backend.db,
        [
            {"pedidoId": order(p), "valorPedido": v, "clienteId": f"c-{p}"}
            for _, p, v, _ in CONVERSAS
        ],
    )
    for conversa, pedido, _, messages in CONVERSAS:
        for text in messages:
            await asyncio.sleep(pace_s)
            await _ask(
                backend,
                f"{conversa}-{order(pedido)}",
                text.replace(pedido, order(pedido)),
                f"c-{pedido}",
            )


async def _ask(backend: Backend, conversa_id: str, text: str, cliente_id: str) -> None:
    """One customer message. A dependency failing is answered to that customer (with the
    fixed apology, as over the API) and the story goes on: one bad answer from the world
    must not stop the rest of the demo."""
    try:
        await backend.customer.handle_message(conversa_id, text, cliente_id)
    except CadenciaError as exc:
        log.warning("demo: %s answered %s: %s", conversa_id, exc.code, exc.message)
