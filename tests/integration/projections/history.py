"""A long random event history of every type the roster reads (seeded, reproducible)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from backend.events import EventType

PROJECTS = ("p-loja", "p-frete")
AGENTS = ("criativo", "po", "arquiteto", "infra", "dev-api", "dev-web", "atendimento")
STATUSES = ("working", "idle", "blocked", "error", "offline")
GATES = ("awaiting_qa", "awaiting_secops", "awaiting_human", "changes_requested", "blocked")


@dataclass(frozen=True)
class Append:
    """One ``EventLog.append_in`` call."""

    type: EventType
    payload: dict[str, Any]
    project_id: str | None
    agent: str | None = None


def history(seed: int, n: int) -> list[Append]:
    """``n`` appends drawn from every roster-relevant event type (and a few it ignores)."""
    rng = random.Random(seed)
    makers = [_status, _status, _pause, _resume, _turn, _execution, _handoff, _dev, _dev]
    makers += [_dev_gate, _infra_gate, _infra_pr, _verdict, _message, _message, _attempt]
    makers += [_interruption, _noise]
    return [rng.choice(makers)(rng) for _ in range(n)]


def _project(rng: random.Random) -> str:
    return rng.choice(PROJECTS)


def _status(rng: random.Random) -> Append:
    payload: dict[str, Any] = {"status": rng.choice(STATUSES)}
    if rng.random() < 0.5:
        payload["detail"] = rng.choice(["writing stories", "  two   spaces ", "", "planning"])
    return Append(EventType.AGENT_STATUS, payload, _project(rng), rng.choice(AGENTS))


def _pause(rng: random.Random) -> Append:
    payload = {"operator": rng.choice(["ana", "bob"]), "reason": rng.choice([None, "custo"])}
    return Append(EventType.AGENT_PAUSED, payload, None, rng.choice(AGENTS))


def _resume(rng: random.Random) -> Append:
    return Append(EventType.AGENT_RESUMED, {"operator": "bob"}, None, rng.choice(AGENTS))


def _turn(rng: random.Random) -> Append:
    payload = {
        "turn": rng.randint(1, 9),
        "text": "ok",
        "tool_calls": [],
        "stop_reason": "end_turn",
        "messages": [],
        "model_calls": 1,
        "model": rng.choice(["chatty", "openai:m@http://x", None]),
    }
    return Append(EventType.AGENT_TURN, payload, _project(rng), rng.choice(AGENTS))


def _execution(rng: random.Random) -> Append:
    modules = rng.choice([["api"], ["api", "web"], [], ["web", "api", "web"]])
    return Append(EventType.EXECUTION_ACTIVATED, {"modules": modules}, _project(rng))


def _handoff(rng: random.Random) -> Append:
    seeded = {a: rng.choice(["allow", "ask", "deny"]) for a in rng.sample(["pr", "merge"], 2)}
    payload = {
        "handoff_id": f"h-{rng.randint(1, 5)}",
        "from_agent": "arquiteto",
        "to_agent": rng.choice(["infra", "infra", "po"]),
        "operator": "ana",
        "autonomy_seeded": seeded,
    }
    return Append(EventType.HANDOFF_ACCEPTED, payload, _project(rng), "arquiteto")


def _dev(rng: random.Random) -> Append:
    task, module = f"t-{rng.randint(1, 30)}", rng.choice(["api", "web"])
    kind = rng.choice(
        [EventType.DEV_TASK_STARTED, EventType.DEV_TASK_DONE, EventType.BACKLOG_TASK_BLOCKED]
    )
    if kind == EventType.BACKLOG_TASK_BLOCKED:
        payload: dict[str, Any] = {"task_id": task, "reason": rng.choice([None, "no tests"])}
    else:
        payload = {"task_id": task, "title": rng.choice(["login", "cart"]), "module": module}
    agent = rng.choice([f"dev-{module}", None])
    return Append(kind, payload, _project(rng), agent)


def _dev_gate(rng: random.Random) -> Append:
    payload = {
        "task_id": f"t-{rng.randint(1, 30)}",
        "from_status": None,
        "gate_status": rng.choice(GATES),
        "reason": rng.choice(["", "hadolint DL3008"]),
    }
    return Append(EventType.PR_GATE_CHANGED, payload, _project(rng))


def _infra_gate(rng: random.Random) -> Append:
    payload = {
        "pr_action_id": str(rng.randint(1, 12)),
        "from_status": "awaiting_qa",
        "gate_status": rng.choice(GATES),
        "reason": "gate",
    }
    return Append(EventType.INFRA_GATE_CHANGED, payload, _project(rng))


def _infra_pr(rng: random.Random) -> Append:
    pr = str(rng.randint(1, 12))
    kind = rng.choice(
        [
            EventType.INFRA_PR_OPENED,
            EventType.INFRA_PR_CORRECTED,
            EventType.INFRA_PR_MERGED,
            EventType.INFRA_ARTIFACT_BLOCKED,
        ]
    )
    payload: dict[str, Any] = {
        EventType.INFRA_PR_OPENED: {
            "pr_action_id": pr,
            "branch": "infra/x",
            "paths": [],
            "pr_url": "file:///x",
            "gate_status": "awaiting_qa",
        },
        EventType.INFRA_PR_CORRECTED: {"pr_action_id": pr, "paths": [], "correction": 1},
        EventType.INFRA_PR_MERGED: {"pr_action_id": pr, "operator": "ana"},
        EventType.INFRA_ARTIFACT_BLOCKED: {"pr_action_id": pr, "reason": "3 corrections"},
    }[kind]
    return Append(kind, payload, _project(rng), "infra")


def _verdict(rng: random.Random) -> Append:
    payload = {
        "verdict": rng.choice(["pass", "fail"]),
        "task_id": f"t-{rng.randint(1, 30)}",
        "findings": [],
        "gate_status": rng.choice(GATES),
    }
    kind = rng.choice([EventType.ARTIFACT_QA_VERDICT, EventType.ARTIFACT_SECOPS_VERDICT])
    return Append(kind, payload, _project(rng), rng.choice(["qa", "secops"]))


def _message(rng: random.Random) -> Append:
    payload = {"conversaId": f"c-{rng.randint(1, 50)}", "autor": "cliente", "texto": "oi"}
    return Append(EventType.CONVERSA_MENSAGEM, payload, None)


def _attempt(rng: random.Random) -> Append:
    payload = {
        "evento": "TENTATIVA_DE_FERRAMENTA_REGISTRADA",
        "timestamp": "2026-12-01T00:00:00.000Z",
        "conversaId": "c-1",
        "pedidoId": "4821",
        "ferramenta": "consultar-status-pedido",
        "tentativaNumero": 1,
        "resultado": "executado",
        "chaveIdempotencia": None,
    }
    return Append(EventType.TENTATIVA_DE_FERRAMENTA_REGISTRADA, payload, None)


def _interruption(rng: random.Random) -> Append:
    payload = {
        "interrupcao_id": rng.randint(1, 9),
        "conversaId": "c-1",
        "ferramenta": "emitir-reembolso",
        "motivo": "teto_de_voltas",
        "attempts": 5,
    }
    return Append(EventType.INTERRUPCAO_ABERTA, payload, None)


def _noise(rng: random.Random) -> Append:
    return Append(
        EventType.ARCHITECTURE_READINESS_CONFIRMED, {"summary": "ok"}, _project(rng), "arquiteto"
    )
