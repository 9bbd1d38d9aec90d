"""One operator-readable line per event; unknown or broken events never crash the feed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from backend.agents.activity import TENTATIVA, ActivityLine, as_event, render
from backend.events import EventType


def ev(type_: str, payload: Any = None, agent: str | None = None, **kw: Any) -> dict[str, Any]:
    return {
        "id": kw.get("id", 7),
        "type": type_,
        "ts": "2026-08-08T09:14:02.118Z",
        "project_id": kw.get("project_id", "p1"),
        "session_id": kw.get("session_id", "s1"),
        "agent": agent,
        "payload": payload,
    }


CASES: list[tuple[dict[str, Any], str]] = [
    (ev("project.created", {"name": "cobaia"}), "project cobaia created"),
    (ev("session.created", {"title": "kickoff"}), "session s1 opened: kickoff"),
    (
        ev("agent.status", {"status": "working", "detail": "drafting Dockerfiles"}, "infra"),
        "infra is working: drafting Dockerfiles",
    ),
    (
        ev(
            "agent.turn",
            {"turn": 2, "tool_calls": ["validate_infra_file", "propose_infra_pr"]},
            "infra",
        ),
        "infra turn 2: called validate_infra_file, propose_infra_pr",
    ),
    (ev("agent.turn", {"text": "Here is the backlog."}, "po"), "po turn: Here is the backlog."),
    (
        ev("agent.paused", {"operator": "ana", "reason": "custo"}, "dev-api"),
        "dev-api paused by ana: custo (no new turn runs)",
    ),
    (ev("agent.paused", {"operator": "ana"}, "po"), "po paused by ana (no new turn runs)"),
    (
        ev("agent.resumed", {"operator": "bob", "paused_by": "ana"}, "po"),
        "po resumed by bob",
    ),
    (
        ev("agent.status", {"status": "error", "detail": "http://h/v1 answered HTTP 500"}, "po"),
        "po error: http://h/v1 answered HTTP 500",
    ),
    (
        ev(
            "agent.budget_exceeded",
            {"day": "2026-12-01", "tokens_per_day": 1000, "used_today": 1042},
            "po",
        ),
        "po stopped: used 1042 of its 1000 tokens for 2026-12-01",
    ),
    (
        ev(
            "agent.budget_changed",
            {
                "operator": "ana",
                "tokens_per_day": 5000,
                "previous": 1000,
                "used_today": 1042,
                "reason": "release day",
            },
            "po",
        ),
        "ana set po's budget to 5000 tokens/day (was 1000): release day",
    ),
    (
        ev(
            "action.decided",
            {
                "action": "terminal",
                "outcome": "deny",
                "stage": "agent_autonomy",
                "rule": "agent_autonomy (infra, terminal) = deny",
            },
            "infra",
        ),
        "infra terminal: deny at agent_autonomy (agent_autonomy (infra, terminal) = deny)",
    ),
    (
        ev("handoff.offered", {"handoff_id": "h1", "from_agent": "arquiteto", "to_agent": "infra"}),
        "arquiteto offered a handoff to infra (handoff h1)",
    ),
    (
        ev(
            "handoff.accepted",
            {
                "handoff_id": "h1",
                "from_agent": "arquiteto",
                "to_agent": "infra",
                "autonomy_seeded": {"open_infra_pr": "auto_approve", "terminal": "deny"},
            },
        ),
        (
            "handoff h1 accepted: infra takes over from arquiteto "
            "(autonomy open_infra_pr=auto_approve, terminal=deny)"
        ),
    ),
    (
        ev("architecture.readiness_confirmed", {"summary": "2 services"}, "arquiteto"),
        "arquiteto confirmed the architecture is ready: 2 services",
    ),
    (
        ev("execution.activated", {"modules": ["api", "web"]}),
        "execution activated for 2 modules: api, web",
    ),
    (
        ev(
            "infra.pr_opened",
            {
                "pr_action_id": "pa-1",
                "branch": "feature/infra-setup",
                "paths": ["services/api/Dockerfile", "compose.yaml"],
            },
            "infra",
        ),
        (
            "infra PR pa-1 opened on feature/infra-setup: 2 files "
            "(services/api/Dockerfile, compose.yaml), awaiting_qa"
        ),
    ),
    (
        ev("infra.pr_failed", {"pr_action_id": "pa-1", "error": "git push refused"}),
        "infra PR pa-1 could not be opened: git push refused",
    ),
    (
        ev(
            "infra.pr_corrected", {"pr_action_id": "pa-1", "correction": 2, "paths": ["Dockerfile"]}
        ),
        "infra PR pa-1 corrected on the same branch (correction 2): Dockerfile",
    ),
    (
        ev(
            "infra.gate_changed",
            {
                "pr_action_id": "pa-1",
                "from_status": "awaiting_qa",
                "gate_status": "changes_requested",
                "reason": "DL3007 latest tag",
            },
        ),
        "infra PR pa-1 gate: awaiting_qa → changes_requested — DL3007 latest tag",
    ),
    (
        ev("infra.artifact_blocked", {"pr_action_id": "pa-1", "reason": "3 corrections failed"}),
        "infra PR pa-1 blocked: 3 corrections failed",
    ),
    (
        ev("infra.pr_merged", {"pr_action_id": "pa-1", "operator": "ana"}),
        "infra PR pa-1 merged by ana",
    ),
    (
        ev(
            "artifact.qa_verdict",
            {
                "pr_action_id": "pa-1",
                "verdict": "changes_requested",
                "findings": [{}, {}],
                "gate_status": "changes_requested",
            },
            "qa",
        ),
        "QA verdict on infra PR pa-1: changes_requested (2 findings), now changes_requested",
    ),
    (
        ev("artifact.qa_verdict", {"task_id": "t-9", "verdict": "pass", "findings": []}, "qa"),
        "QA verdict on dev PR t-9: pass (0 findings)",
    ),
    (
        ev("artifact.secops_verdict", {"pr_action_id": "pa-1", "verdict": "pass", "findings": 1}),
        "SecOps verdict on infra PR pa-1: pass (1 finding)",
    ),
    (
        ev("artifact.secops_verdict", {"task_id": "t-9", "verdict": "changes_requested"}),
        "SecOps verdict on dev PR t-9: changes_requested",
    ),
    (
        ev(
            "pr.gate_changed",
            {"task_id": "t-9", "from_status": "awaiting_secops", "gate_status": "awaiting_human"},
        ),
        "dev PR t-9 gate: awaiting_secops → awaiting_human",
    ),
    (
        ev(
            "pr.gates_rerun",
            {
                "pr_action_id": "act_9",
                "kind": "infra",
                "gate_status": "awaiting_secops",
                "operator": "ana",
                "reason": "the scan died",
                "job_status": "failed",
            },
        ),
        "ana re-ran the gates of infra PR act_9 (awaiting_secops): the scan died",
    ),
    (
        ev(
            "gate.finding_waived",
            {
                "pr_id": "act_9",
                "kind": "infra",
                "finding": "f_0123456789abcdef",
                "gate": "secops",
                "tool": "detect-secrets",
                "rule": "Secret Keyword",
                "file": "docs/dev.md",
                "line": 5,
                "operator": "ana",
                "reason": "demo account",
                "reevaluated": True,
                "gate_status": "awaiting_qa",
            },
        ),
        "ana waived detect-secrets:Secret Keyword in docs/dev.md on infra PR act_9: "
        "demo account (gates re-run)",
    ),
    (
        ev(
            "pr.correction_unchanged",
            {
                "pr_action_id": "act_1",
                "kind": "infra",
                "task_id": None,
                "detail": "the author proposed no files",
            },
            "infra",
        ),
        "infra PR act_1: no change in the correction (the author proposed no files); "
        "not committed, still changes_requested",
    ),
    (
        ev("dev.task_started", {"task_id": "t-9", "title": "health endpoint"}, "dev-api"),
        "dev-api started task t-9: health endpoint",
    ),
    (ev("dev.task_done", {"task_id": "t-9"}, "dev-api"), "dev-api finished task t-9"),
    (
        ev("backlog.task_blocked", {"task_id": "t-9", "reason": "needs a DB"}),
        "task t-9 blocked: needs a DB",
    ),
    (
        ev(
            "approval.requested",
            {
                "approval_id": "a1",
                "action": "open_adr_pr",
                "stage": "default",
                "rule": "default: open_adr_pr -> ask",
            },
            "arquiteto",
        ),
        "approval a1 requested: arquiteto wants open_adr_pr — default: open_adr_pr -> ask",
    ),
    (
        ev(
            "approval.decided",
            {"approval_id": "a1", "outcome": "rejected", "operator": "ana", "reason": "wrong base"},
        ),
        "approval a1 rejected by ana: wrong base",
    ),
    (
        ev(
            "approval.decided",
            {
                "approval_id": "a2",
                "action": "open_adr_pr",
                "outcome": "approved",
                "operator": "ana",
                "executed": True,
                "pr_id": "act_9",
            },
        ),
        "approval a2 (open_adr_pr) approved by ana → PR act_9",
    ),
    (
        ev(
            "approval.decided",
            {
                "approval_id": "a3",
                "action": "open_infra_pr",
                "outcome": "failed",
                "operator": "ana",
                "executed": False,
                "error": "branch exists",
            },
        ),
        "approval a3 (open_infra_pr) failed by ana — could not run: branch exists",
    ),
    (
        ev(
            "handoff.declined",
            {
                "handoff_id": "h2",
                "from_agent": "arquiteto",
                "to_agent": "infra",
                "operator": "ana",
                "reason": "not yet",
            },
        ),
        "handoff h2 from arquiteto to infra declined by ana: not yet",
    ),
    (
        ev(
            "adr.pr_opened",
            {
                "pr_action_id": "act_a",
                "adr": "0001-conteineres",
                "branch": "adr/0001-conteineres",
                "paths": ["docs/adr/0001-conteineres.md"],
                "pr_url": None,
                "gate_status": "awaiting_qa",
            },
        ),
        "ADR PR act_a (0001-conteineres) opened on adr/0001-conteineres, awaiting_qa",
    ),
    (
        ev("adr.pr_failed", {"pr_action_id": "act_a", "error": "branch exists"}),
        "ADR PR act_a could not be opened: branch exists",
    ),
    (
        ev(
            "adr.gate_changed",
            {
                "pr_action_id": "act_a",
                "adr": "0001-conteineres",
                "from_status": "awaiting_secops",
                "gate_status": "awaiting_human",
                "reason": "secops pass",
            },
        ),
        "ADR PR act_a (0001-conteineres) gate: awaiting_secops → awaiting_human — secops pass",
    ),
    (
        ev("adr.pr_merged", {"pr_action_id": "act_a", "adr": "0001-x", "operator": "ana"}),
        "ADR 0001-x merged (PR act_a) by ana",
    ),
    (
        ev(
            "artifact.qa_verdict",
            {
                "verdict": "pass",
                "pr_action_id": "act_a",
                "task_id": None,
                "kind": "adr",
                "findings": [],
                "gate_status": "awaiting_secops",
            },
        ),
        "QA verdict on ADR PR act_a: pass (0 findings), now awaiting_secops",
    ),
    (
        ev(
            TENTATIVA,
            {
                "evento": TENTATIVA,
                "timestamp": "2026-08-08T09:16:41.902Z",
                "conversaId": "conv-77f1",
                "pedidoId": "4821",
                "ferramenta": "emitir-reembolso",
                "tentativaNumero": 2,
                "resultado": "bloqueado_por_idempotencia",
                "chaveIdempotencia": "conv-77f1#4821#reembolso",
            },
        ),
        "emitir-reembolso attempt 2 on pedido 4821 in conv-77f1: bloqueado_por_idempotencia",
    ),
    (
        ev(
            TENTATIVA,
            {
                "conversaId": "c2",
                "pedidoId": "9",
                "ferramenta": "consultar-status-pedido",
                "tentativaNumero": 5,
                "resultado": "bloqueado_por_teto",
            },
        ),
        (
            "consultar-status-pedido attempt 5 on pedido 9 in c2: bloqueado_por_teto "
            "(teto de voltas reached, handed to a human)"
        ),
    ),
    (
        ev(
            TENTATIVA,
            {
                "conversaId": "c3",
                "clienteId": "c-17",
                "ferramenta": "atualizar-cadastro",
                "tentativaNumero": 1,
                "resultado": "argumentos_invalidos",
            },
        ),
        "atualizar-cadastro attempt 1 on cliente c-17 in c3: argumentos_invalidos",
    ),
    (
        ev(
            "interrupcao.aberta",
            {
                "interrupcao_id": "i1",
                "conversaId": "c2",
                "ferramenta": "consultar-status-pedido",
                "pedidoId": "9",
            },
        ),
        "interruption i1 opened in c2 (consultar-status-pedido, pedido 9): teto de voltas reached",
    ),
    (
        ev(
            "interrupcao.liberada",
            {"interrupcao_id": 7, "operator": "ana", "reason": "fim do turno"},
        ),
        "interruption 7 released by ana: fim do turno",
    ),
    (
        ev("interrupcao.assumida", {"interrupcao_id": "i1", "operator": "ana"}),
        "interruption i1 claimed by ana",
    ),
    (
        ev("interrupcao.resolvida", {"interrupcao_id": "i1", "operator": "ana", "action": "deny"}),
        "interruption i1 resolved by ana: deny",
    ),
    (
        ev("conversa.mensagem", {"conversaId": "c2", "autor": "cliente", "texto": "Já caiu?"}),
        "cliente in c2: Já caiu?",
    ),
    (
        ev("idea.readiness_confirmed", {"summary": "a queue of dog walkers"}, "criativo"),
        "criativo confirmed the idea is ready: a queue of dog walkers",
    ),
    (
        ev("backlog.story_created", {"title": "walker signs up", "description": "..."}, "po"),
        "po wrote a story: walker signs up",
    ),
    (
        ev("backlog.task_created", {"module": "api", "title": "health endpoint"}, "po"),
        "po created a task for api: health endpoint",
    ),
    (
        ev("architecture.module_map_written", {"modules": ["api", "web"]}, "arquiteto"),
        "arquiteto wrote the module map: 2 modules (api, web)",
    ),
    (
        ev(
            "tools.provisioning",
            {"tool": "semgrep", "detail": "one-time install for the SecOps gate"},
        ),
        "installing semgrep — one-time install for the SecOps gate",
    ),
    (
        ev("tools.ready", {"tool": "semgrep", "path": "/data/tools/bin/semgrep"}),
        "semgrep is installed at /data/tools/bin/semgrep",
    ),
    (
        ev("tools.failed", {"tool": "semgrep", "error": "pip: no network"}),
        "could not install semgrep: pip: no network",
    ),
    (
        ev("backend.task_failed", {"task": "reconcile", "error": "LedgerError('down')"}),
        "background task reconcile failed: LedgerError('down')",
    ),
    (
        ev("conversa.sem_resposta", {"conversaId": "c-9", "reason": "atendimento is paused"}),
        "customer in c-9 waits: no agent will answer (atendimento is paused)",
    ),
    (
        ev("conversa.respondida", {"conversaId": "c-9"}),
        "the waiting customer in c-9 got a reply",
    ),
    (
        ev(
            "job.dead",
            {"job_id": 7, "kind": "gates", "attempts": 3, "error": "GitError: gone"},
        ),
        "gates job #7 stopped after 3 attempt(s): GitError: gone",
    ),
    (
        ev(
            "job.rerun",
            {"job_id": 7, "kind": "gates", "attempts": 3, "operator": "ana", "reason": "back"},
        ),
        "ana re-ran gates job #7: back",
    ),
    (
        ev("job.dropped", {"job_id": 7, "kind": "deliver", "attempts": 5, "operator": "ana"}),
        "ana dropped deliver job #7",
    ),
    (ev("bench.tick", {"i": 41, "t": 1.5}), "bench tick 41"),
    (
        ev(
            "events.archived",
            {
                "file": "old.jsonl.gz",
                "before": "2026-11-01",
                "archived": 9000,
                "kept": 40,
                "first_id": 1,
                "last_id": 9040,
            },
        ),
        "archived 9000 events before 2026-11-01 to old.jsonl.gz (40 kept: live state reads them)",
    ),
    (
        ev("events.restored", {"file": "old.jsonl.gz", "restored": 9000, "skipped": 0}),
        "restored 9000 events from old.jsonl.gz (0 already in the log)",
    ),
    (
        ev(
            "operator.action",
            {
                "operator": "admin",
                "role": "admin",
                "as_operator": "ana",
                "action": "approve",
                "method": "POST",
                "path": "/api/prs/pr-1/approve",
                "target": {"pr_action_id": "pr-1"},
                "outcome": "refused",
                "status": 403,
                "error": "forbidden",
                "reason": "lgtm",
            },
        ),
        "admin as ana approve pr-1: refused (403) forbidden — lgtm",
    ),
    (
        ev(
            "interrupcao.concedida",
            {
                "interrupcao_id": 3,
                "operator": "ana",
                "attempts": 2,
                "reason": "cliente confirmou",
                "conversaId": "conv-1",
            },
        ),
        "interruption 3: ana gave the agent 2 more attempt(s): cliente confirmou",
    ),
    (
        ev(
            "interrupcao.valor_corrigido",
            {
                "interrupcao_id": 3,
                "operator": "ana",
                "conversaId": "conv-1",
                "valor_anterior": "500.00",
                "valor": "129.90",
                "reason": "valor do pedido",
            },
        ),
        "interruption 3: ana corrected the amount to 129.90: valor do pedido",
    ),
    (
        ev(
            "ledger.reconciliado",
            {
                "chaveIdempotencia": "reembolso#4821",
                "conversaId": "conv-1",
                "status": "executado",
                "by": "reconcile",
                "how": "gateway",
            },
        ),
        "ledger reembolso#4821 settled as executado (asked the gateway)",
    ),
    (
        ev(
            "ledger.reconciliado",
            {
                "chaveIdempotencia": "reembolso#4821",
                "conversaId": "conv-1",
                "status": "falhou",
                "by": "ana",
                "how": "by_hand",
                "reason": "banco confirmou",
            },
        ),
        "ledger reembolso#4821 settled as falhou by ana: banco confirmou",
    ),
]


@pytest.mark.parametrize(
    ("event", "text"), CASES, ids=[c[0]["type"] + str(i) for i, c in enumerate(CASES)]
)
def test_texts(event: dict[str, Any], text: str) -> None:
    line = render(event)
    assert line == ActivityLine(7, "2026-08-08T09:14:02.118Z", event["type"], text)


def test_every_event_type_has_a_tested_text() -> None:
    assert {event["type"] for event, _ in CASES} == set(EventType)


def test_renders_the_store_event_dataclass_too() -> None:
    @dataclass(frozen=True)
    class Event:
        id: int
        type: str
        ts: str
        project_id: str | None = None
        session_id: str | None = None
        agent: str | None = None
        payload: dict[str, Any] = field(default_factory=dict)

    line = render(Event(3, "dev.task_done", "t", agent="dev-web", payload={"task_id": "x"}))
    assert line.to_dict() == {
        "id": 3,
        "ts": "t",
        "kind": "dev.task_done",
        "text": "dev-web finished task x",
    }


@pytest.mark.parametrize("payload", [None, [1, 2], "text", 42, {}, {"unexpected": object()}])
@pytest.mark.parametrize("type_", [*EventType, "something.new"])
def test_never_crashes_on_odd_payloads(type_: str, payload: Any) -> None:
    line = render(ev(type_, payload))
    assert line.kind == type_
    assert line.text


def test_broken_renderer_input_falls_back_to_the_generic_line() -> None:
    # ``modules`` as a dict of dicts is not what anyone sends; the line still renders.
    assert render(ev("execution.activated", {"modules": {"a": {}}})).text.startswith("execution")


def test_unknown_types_render_generically() -> None:
    line = render(ev("gate.scanner_missing", {"scanner": "semgrep", "status": "skipped"}, "secops"))
    assert line.text == "gate.scanner_missing by secops (scanner=semgrep, status=skipped)"
    assert render({}).text == "unknown"
    assert render(object()).kind == "unknown"


def test_as_event_normalises_payloads_and_ids() -> None:
    view = as_event({"id": "12", "type": "x", "payload": [1]})
    assert (view.id, view.payload) == (12, {"value": [1]})
    assert as_event({"id": "zz"}).id == 0
