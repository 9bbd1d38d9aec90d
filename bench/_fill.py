"""Fill a database with a realistic, seeded history through the product's own append path.

``fill(database_url, events)`` is what every history-scale bench starts from
(``bench.history``, ``bench.console``): it migrates the database with the product's
``migrate``, creates a real project (team store: the ``projects`` row and its
``project.created`` event), runs the set-up an operator would (module map, execution
activated, the Arquiteto→Infra handoff accepted, a few pending approvals, a few real
customer conversations through :class:`~backend.guard.conversations.Conversations`), and then
writes the bulk of the history with :meth:`EventLog.append_in` inside transactions of
:data:`BATCH` events — so every event passes the catalog's type and payload checks exactly
as in production, and whatever the append path maintains (projections, once they exist) is
maintained here too.

The bulk mix follows what ``cadencia up --demo`` produces, in proportions a month of real
traffic would have: mostly customer conversations (``conversa.mensagem`` from ``cliente``
and ``agente``, a guarded ``TENTATIVA_DE_FERRAMENTA_REGISTRADA`` of one of the three tools,
``action.decided``; now and then the teto de voltas blocking and opening an
interruption), then agent turns (``agent.status`` working → ``agent.turn`` with model and
usage → ``agent.status`` idle) of every team agent, then PRs moving through their gates,
approvals, handoffs and pauses. Each batch opens a new session, like a team's day of work,
so no single agent's turn history (the model's memory, read whole per turn) grows without
bound.

Same seed, same history: the same events in the same order with the same texts (project,
session and approval ids are the store's own, random; timestamps are the append's clock).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from backend.agents.store import TeamStore
from backend.events import TENTATIVA, EventLog, EventType, utcnow_iso
from backend.guard.conversations import Conversations
from backend.projections.roster_table import RosterProjection
from backend.store.db import Database, Tx, open_database
from backend.store.migrate import migrate

BATCH = 4000
"""Events per bulk transaction: large enough that commits are not the cost, small enough
that a PostgreSQL transaction stays modest."""

MODULES = ("api", "site", "worker")
MODULE_MAP = {
    "modules": [
        {"name": "api", "path": "api", "language": "python", "kind": "service", "port": 8000},
        {"name": "site", "path": "site", "language": "typescript", "kind": "web", "port": 3000},
        {"name": "worker", "path": "worker", "language": "python", "kind": "worker"},
    ]
}
CONVERSATIONAL = ("criativo", "po", "arquiteto", "infra")
DEV_AGENTS = tuple(f"dev-{m}" for m in MODULES)
AGENTS = (*CONVERSATIONAL, *DEV_AGENTS, "qa", "secops", "atendimento")
"""Every agent of the filled project's team (what its roster lists)."""
TOOLS = ("consultar-status-pedido", "emitir-reembolso", "atualizar-cadastro")
MODEL = "scripted:bench-fill"
OPERATOR = "bench-operator"
ASKS = (
    "Quero o reembolso do pedido {p}",
    "Qual o status do pedido {p}?",
    "Já caiu o estorno do {p}?",
    "Preciso atualizar meu endereço de entrega",
    "Olá? O reembolso do {p} saiu?",
    "Pode verificar o pedido {p}, por favor?",
)
ANSWERS = (
    "O pedido {p} está em transporte e chega amanhã.",
    "Reembolso do pedido {p} emitido: o valor aparece em até 5 dias úteis.",
    "Seu cadastro foi atualizado.",
    "Já existe um reembolso para o pedido {p}; não vou emitir outro.",
)


@dataclass(frozen=True)
class FillResult:
    """What a bench needs to address the filled history."""

    last_event_id: int
    project_id: str
    session_id: str  # the newest session
    conversation_id: str  # a conversation with real rows (messages) and many events
    agent_id: str  # a conversational agent with many turns
    events: int  # events in the log after the fill
    counts: dict[str, int] = field(default_factory=dict)  # per event type, written by the fill


@dataclass
class _Writer:
    """Appends into the current bulk transaction and counts what it wrote."""

    log: EventLog
    tx: Tx | None = None
    written: int = 0
    counts: Counter[str] = field(default_factory=Counter)

    def __call__(self, type: EventType, payload: dict[str, Any], **where: str | None) -> None:
        assert self.tx is not None
        self.log.append_in(self.tx, type, payload, **where)
        self.written += 1
        self.counts[type.value] += 1


class _History:
    """The seeded generator of the bulk mix (one method per kind of traffic)."""

    def __init__(
        self, rng: random.Random, project_id: str, hot_conversation: str, events: int
    ) -> None:
        self.rng = rng
        self.project_id = project_id
        self.hot = hot_conversation
        # The conversation a bench reads gets about 60 exchanges spread over the whole
        # history: the size of a long real conversation, whatever the log's length.
        self.hot_p = min(0.5, 60 / max(1.0, events * 0.17))
        self.session_id = ""
        self.turns: Counter[str] = Counter()
        self.attempts: Counter[tuple[str, str]] = Counter()
        self.conversations = 0
        self.prs = 0
        self.interruptions = 0
        self.approvals = 0
        self.paused: set[str] = set()

    def kinds(self) -> list[tuple[Callable[[_Writer], None], int]]:
        return [
            (self.customer, 60),
            (self.turn, 25),
            (self.pr, 8),
            (self.approval, 3),
            (self.teto, 2),
            (self.handoff, 1),
            (self.pause, 1),
        ]

    # -- customer service ------------------------------------------------------------------

    def customer(self, w: _Writer) -> None:
        rng = self.rng
        if rng.random() < self.hot_p:
            conversa = self.hot
        else:
            self.conversations += rng.random() < 0.3
            conversa = f"conv-{self.conversations:06d}"
        pedido = f"{4000 + rng.randrange(6000)}"
        tool = rng.choice(TOOLS)
        where = {"session_id": conversa, "agent": "atendimento"}
        ask = rng.choice(ASKS).format(p=pedido)
        w(
            EventType.CONVERSA_MENSAGEM,
            {"conversaId": conversa, "autor": "cliente", "texto": ask},
            session_id=conversa,
        )
        w(
            EventType.ACTION_DECIDED,
            {"action": "tool_call", "outcome": "allow", "stage": "default", "rule": tool},
            **where,
        )
        entity = pedido if tool != "atualizar-cadastro" else f"c-{pedido}"
        self.attempts[(conversa, entity)] += 1
        n = self.attempts[(conversa, entity)]
        w(TENTATIVA, self._tentativa(conversa, tool, pedido, n, self._resultado(tool, n)), **where)
        answer = rng.choice(ANSWERS).format(p=pedido)
        w(
            EventType.CONVERSA_MENSAGEM,
            {"conversaId": conversa, "autor": "agente", "texto": answer},
            **where,
        )
        if conversa == self.hot:
            # Its transcript rows too (the conversation route reads them), by the product's
            # own named query, in the same transaction as its events.
            assert w.tx is not None
            for role, text in (("cliente", ask), ("agente", answer)):
                w.tx.one(
                    "message_append",
                    {"conversa_id": conversa, "role": role, "text": text, "ts": utcnow_iso()},
                )

    def _resultado(self, tool: str, n: int) -> str:
        if tool == "emitir-reembolso" and n > 1:
            return "bloqueado_por_idempotencia"
        roll = self.rng.random()
        return "falhou" if roll < 0.02 else "argumentos_invalidos" if roll < 0.03 else "executado"

    def _tentativa(
        self, conversa: str, tool: str, pedido: str, n: int, resultado: str
    ) -> dict[str, Any]:
        record: dict[str, Any] = {
            "evento": TENTATIVA.value,
            "timestamp": utcnow_iso(),
            "conversaId": conversa,
            "pedidoId": pedido,
            "ferramenta": tool,
            "tentativaNumero": 0 if resultado == "argumentos_invalidos" else n,
            "resultado": resultado,
            "chaveIdempotencia": None
            if resultado == "argumentos_invalidos"
            else f"{conversa}:{tool}:{pedido}",
        }
        if tool == "atualizar-cadastro":
            record["clienteId"] = f"c-{pedido}"
        return record

    def teto(self, w: _Writer) -> None:
        """The customer insists: the teto de voltas blocks the refund and opens a takeover."""
        self.conversations += 1
        self.interruptions += 1
        conversa = f"conv-{self.conversations:06d}"
        pedido = f"{4000 + self.rng.randrange(6000)}"
        where = {"session_id": conversa, "agent": "atendimento"}
        w(
            EventType.CONVERSA_MENSAGEM,
            {
                "conversaId": conversa,
                "autor": "cliente",
                "texto": f"Pode estornar o {pedido} de novo?",
            },
            session_id=conversa,
        )
        w(
            TENTATIVA,
            self._tentativa(conversa, "emitir-reembolso", pedido, 4, "bloqueado_por_teto"),
            **where,
        )
        w(
            EventType.INTERRUPCAO_ABERTA,
            {
                "interrupcao_id": 100000 + self.interruptions,
                "conversaId": conversa,
                "ferramenta": "emitir-reembolso",
                "pedidoId": pedido,
                "motivo": "teto_de_voltas",
                "attempts": 4,
            },
            **where,
        )
        if self.rng.random() < 0.8:  # most are handled by an operator the same day
            ident = 100000 + self.interruptions
            w(
                EventType.INTERRUPCAO_ASSUMIDA,
                {"interrupcao_id": ident, "operator": OPERATOR},
                **where,
            )
            w(
                EventType.INTERRUPCAO_RESOLVIDA,
                {
                    "interrupcao_id": ident,
                    "operator": OPERATOR,
                    "action": "deny",
                    "reply": "O reembolso já foi emitido; aguarde o prazo do banco.",
                },
                **where,
            )

    # -- the team ----------------------------------------------------------------------------

    def turn(self, w: _Writer) -> None:
        rng = self.rng
        agent = rng.choice((*CONVERSATIONAL, *CONVERSATIONAL, *DEV_AGENTS))
        where = {"project_id": self.project_id, "session_id": self.session_id, "agent": agent}
        if agent.startswith("dev-"):
            task = f"tsk-{rng.randrange(1 << 20):05x}"
            body = {"task_id": task, "title": f"tarefa {task}", "module": agent[4:]}
            w(EventType.DEV_TASK_STARTED, body, **where)
            w(EventType.DEV_TASK_DONE, body, **where)
            return
        self.turns[agent] += 1
        ask = f"Revise o plano, passo {self.turns[agent]}."
        answer = f"Plano revisado ({self.turns[agent]}): nada muda no escopo."
        w(
            EventType.AGENT_STATUS,
            {"status": "working", "detail": f"thinking about: {ask}"},
            **where,
        )
        w(
            EventType.AGENT_TURN,
            {
                "turn": self.turns[agent],
                "text": answer,
                "tool_calls": [],
                "stop_reason": "end_turn",
                "messages": [
                    {"role": "user", "text": ask},
                    {"role": "assistant", "text": answer, "tool_calls": []},
                ],
                "model_calls": 1,
                "model": MODEL,
                "usage": {
                    "input_tokens": 600 + rng.randrange(900),
                    "output_tokens": 40 + rng.randrange(200),
                },
            },
            **where,
        )
        w(EventType.AGENT_STATUS, {"status": "idle", "detail": ""}, **where)

    def pr(self, w: _Writer) -> None:
        rng = self.rng
        self.prs += 1
        where = {"project_id": self.project_id, "session_id": self.session_id}
        if rng.random() < 0.3:
            pr = f"act-infra-{self.prs:05d}"
            w(
                EventType.INFRA_PR_OPENED,
                {
                    "pr_action_id": pr,
                    "branch": f"infra/{self.prs}",
                    "paths": ["api/Dockerfile", "compose.yaml"],
                    "pr_url": f"file:///repos/{self.project_id}#{pr}",
                    "gate_status": "awaiting_qa",
                },
                agent="infra",
                **where,
            )
            for agent, verdict_type, after in (
                ("qa", EventType.ARTIFACT_QA_VERDICT, "awaiting_secops"),
                ("secops", EventType.ARTIFACT_SECOPS_VERDICT, "awaiting_human"),
            ):
                w(
                    verdict_type,
                    {"verdict": "pass", "pr_action_id": pr, "findings": [], "gate_status": after},
                    agent=agent,
                    **where,
                )
            w(
                EventType.INFRA_PR_MERGED,
                {"pr_action_id": pr, "operator": OPERATOR},
                agent="infra",
                **where,
            )
            return
        task = f"tsk-{self.prs:05d}"
        agent = rng.choice(DEV_AGENTS)
        steps: list[tuple[str | None, str, str]] = [
            (None, "awaiting_qa", "PR opened"),
            ("awaiting_qa", "awaiting_secops", "qa passed"),
        ]
        if rng.random() < 0.25:
            steps.append(("awaiting_secops", "changes_requested", "secops found 1 finding"))
            steps.append(("changes_requested", "awaiting_qa", "correction committed"))
            steps.append(("awaiting_qa", "awaiting_secops", "qa passed"))
        steps.append(("awaiting_secops", "awaiting_human", "secops passed"))
        steps.append(("awaiting_human", "merged", f"merged by {OPERATOR}"))
        for before, after, reason in steps:
            w(
                EventType.PR_GATE_CHANGED,
                {"task_id": task, "from_status": before, "gate_status": after, "reason": reason},
                agent=agent,
                **where,
            )

    def approval(self, w: _Writer) -> None:
        self.approvals += 1
        ident = f"apr_fill{self.approvals:06d}"
        where = {"project_id": self.project_id, "session_id": self.session_id, "agent": "arquiteto"}
        w(
            EventType.APPROVAL_REQUESTED,
            {
                "approval_id": ident,
                "action": "open_adr_pr",
                "stage": "default",
                "rule": "open_adr_pr",
            },
            **where,
        )
        outcome = "approved" if self.rng.random() < 0.8 else "rejected"
        w(
            EventType.APPROVAL_DECIDED,
            {
                "approval_id": ident,
                "outcome": outcome,
                "operator": OPERATOR,
                "action": "open_adr_pr",
                **({"executed": True} if outcome == "approved" else {"reason": "fora do escopo"}),
            },
            **where,
        )

    def handoff(self, w: _Writer) -> None:
        ident = f"hof_fill{self.rng.randrange(1 << 30):08x}"
        body = {"handoff_id": ident, "from_agent": "criativo", "to_agent": "po"}
        where = {"project_id": self.project_id, "session_id": self.session_id, "agent": "criativo"}
        w(EventType.HANDOFF_OFFERED, {**body, "note": "ideia pronta para o backlog"}, **where)
        w(
            EventType.HANDOFF_ACCEPTED,
            {**body, "operator": OPERATOR, "autonomy_seeded": {}},
            **where,
        )

    def pause(self, w: _Writer) -> None:
        # Pauses in the bulk always end with a resume, so the live pause table (which the
        # fill does not touch here) and the log agree: nobody is left paused.
        agent = self.rng.choice(AGENTS)
        w(
            EventType.AGENT_PAUSED,
            {"operator": OPERATOR, "reason": "revisão de custos"},
            agent=agent,
        )
        w(EventType.AGENT_RESUMED, {"operator": OPERATOR, "paused_by": OPERATOR}, agent=agent)


def _setup(db: Database, log: EventLog, hot: str) -> tuple[str, str, Counter[str]]:
    """The project and the live state a bench reads, created through the product's services."""
    store = TeamStore(log)
    before = log.last_id()
    project = store.create_project("bench-history", module_map=None)
    session = store.create_session(project.id, "bench: dia 1")
    store.set_module_map(project.id, MODULE_MAP)
    store.activate_execution(project.id)
    offer = store.offer_handoff(project.id, session["id"], "arquiteto", "infra", "módulos prontos")
    store.accept_handoff(offer.id, OPERATOR)
    for n in range(3):  # pending approvals: the inbox has something to show
        store.request_approval(
            project_id=project.id,
            session_id=session["id"],
            agent="arquiteto",
            action="open_adr_pr",
            payload={"adr": f"000{n + 1}-bench"},
            stage="default",
            rule="open_adr_pr",
        )
    talks = Conversations(db, log)
    for conversa in (hot, "conv-live-b", "conv-live-c"):
        talks.say(conversa, "cliente", "Quero o reembolso do pedido 4821", cliente_id="c-4821")
        talks.say(conversa, "agente", "Reembolso do pedido 4821 emitido.", agent="atendimento")
    talks.take("conv-live-c", OPERATOR)  # one conversation held by a human
    counts: Counter[str] = Counter()
    for event in log.after(before, 1000):
        counts[event.type] += 1
    return project.id, session["id"], counts


def _batches(total: int) -> Iterator[int]:
    while total > 0:
        yield min(BATCH, total)
        total -= BATCH


def fill(database_url: str, events: int, *, seed: int = 0, progress: bool = True) -> FillResult:
    """Migrate ``database_url`` and write about ``events`` events of realistic history.

    The set-up (project, sessions, approvals, conversations) counts towards ``events``; a
    batch ends with its last exchange whole, so the log may hold a few events more than
    asked (``FillResult.events`` says how many). An existing log is appended to.

    Returns:
        The last event id, the ids a bench addresses, and counts per event type.
    """
    db = open_database(database_url)
    try:
        migrate(db)
        log = EventLog(db)
        # The roster projection is kept in each append's transaction, as in the product
        # (Backend wires the same projector), so a filled store needs no rebuild on start.
        projection = RosterProjection(db, log)
        log.add_projector(projection.apply)
        store = TeamStore(log)
        hot = "conv-bench-hot"
        project_id, session_id, counts = _setup(db, log, hot)
        history = _History(random.Random(seed), project_id, hot, events)
        kinds, weights = zip(*history.kinds(), strict=True)
        todo = max(0, events - sum(counts.values()))
        writer = _Writer(log, counts=counts)
        with _progress(progress, todo) as advance:
            for day, size in enumerate(_batches(todo), start=2):
                # A new session per batch: a day of the team's work.
                session_id = store.create_session(project_id, f"bench: dia {day}")["id"]
                counts[EventType.SESSION_CREATED.value] += 1
                history.session_id = session_id
                goal = writer.written + size - 1  # the session.created above is one of them
                with db.transaction() as tx:
                    writer.tx = tx
                    while writer.written < goal:
                        history.rng.choices(kinds, weights)[0](writer)
                writer.tx = None
                writer.written += 1
                advance(size)
        # A backend that served this history built its time-travel snapshots as it went
        # (every 1000 events); build them here so a bench measures that steady state, not
        # a fresh serve folding the whole log in the background.
        projection.snapshots.catch_up()
        return FillResult(
            last_event_id=log.last_id(),
            project_id=project_id,
            session_id=session_id,
            conversation_id=hot,
            agent_id="arquiteto",
            events=sum(counts.values()),
            counts=dict(counts),
        )
    finally:
        db.close()


class _progress:
    """A rich progress bar on a TTY (or when asked), else silence; always a summary line."""

    def __init__(self, enabled: bool, total: int) -> None:
        self.enabled = enabled
        self.total = total
        self._bar: Any = None
        self._task: Any = None
        self._started = 0.0

    def __enter__(self) -> Callable[[int], None]:
        import time

        self._started = time.perf_counter()
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                "filling events",
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("fill", total=self.total)
        return self._advance

    def _advance(self, n: int) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, n)

    def __exit__(self, *exc: object) -> None:
        import time

        if self._bar is not None:
            self._bar.stop()
            seconds = time.perf_counter() - self._started
            rate = self.total / seconds if seconds else 0.0
            print(f"filled {self.total} events in {seconds:.1f} s ({rate:,.0f}/s)", flush=True)
