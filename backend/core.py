"""The backend process's parts, assembled once from settings (STYLE rule 2: a factory).

:class:`Backend` owns the database, the guard, the team, the infra pipeline, the customer
service and the live broadcast; the HTTP API and ``cadencia up`` both drive it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets as _secrets
from dataclasses import dataclass
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

from backend.agents.budgets import Budgets
from backend.agents.customer_service import CustomerService
from backend.agents.infra_tools import InfraAgentTools
from backend.agents.pauses import Pauses
from backend.agents.store import TeamStore
from backend.agents.team_service import TeamService
from backend.agents.usage import UsageBook
from backend.broadcast import Broadcaster
from backend.channel.base import Channel, RetryPolicy
from backend.channel.simulator import ChannelSimulator
from backend.channel.webhook import WebhookChannel
from backend.channel.worker import DeliveryWorker
from backend.dead_jobs import DeadJobs
from backend.dev.agents import DevAgents, task_creator
from backend.dev.tasks import DevTasks
from backend.dev.worker import DevWorker
from backend.events import TENTATIVA, EventType
from backend.exceptions import CadenciaError, NotFoundError
from backend.guard.assembly import Guard, build_guard
from backend.guard.interruptions import Interruption
from backend.guard.takeovers import Action, LedgerFacts, Resolved, Takeovers
from backend.guard.uncertain import HandOutcome, Settled, UncertainOutcomes, chave_of, item_id
from backend.inbox import Inbox
from backend.jobs import Backoff, Job, Jobs
from backend.oncall.expiry import Expiries
from backend.oncall.gauges import OnCallGauges
from backend.oncall.notifier import OnCall
from backend.operators.accounts import Operators
from backend.projections.rebuild import ensure_current
from backend.projections.roster_table import RosterProjection
from backend.prs.authoring import ModelAuthor
from backend.prs.decisions import Decisions
from backend.prs.kind_adr import AdrTool
from backend.prs.pipeline import InfraPipeline
from backend.settings import Settings
from backend.sla import Slas
from backend.store.db import open_database
from backend.store.files import FILE_MODE, private_dir, secure_data_dir, tighten
from backend.tools.registry import tool_spec

RECONCILE_LEASE_S = 60.0
"""A reconcile round holds its job this long between heartbeats; after a crash, the next
process takes the round over once it lapses."""

TRANSCRIPT_SHOWN = 1000
"""A takeover's detail shows at most the newest messages and attempts of its conversation."""

log = logging.getLogger(__name__)


def resolve_token(settings: Settings) -> tuple[str, bool]:
    """The API token: ``CADENCIA_TOKEN``, else ``<data_dir>/token`` (generated, mode 0600).

    Returns ``(token, generated_now)`` so the caller can print a new token exactly once.
    """
    if settings.token:
        return settings.token, False
    path = settings.data_dir / "token"
    if path.exists():
        tighten(path, FILE_MODE)
        return path.read_text(encoding="utf-8").strip(), False
    private_dir(settings.data_dir)
    token = _secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(token + "\n")
    return token, True


def _scripts(settings: Settings) -> Any:
    if settings.scripts_path:
        return json.loads(Path(settings.scripts_path).read_text(encoding="utf-8"))
    return json.loads(
        resources.files("backend.demo").joinpath("team_script.json").read_text("utf-8")
    )


def _channel(settings: Settings) -> tuple[ChannelSimulator | None, Channel]:
    """The customer's outbound channel: the webhook, or a local simulator behind one."""
    if settings.channel_webhook_url:
        return None, WebhookChannel(
            settings.channel_webhook_url, timeout_s=settings.channel_timeout_s
        )
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    simulator = ChannelSimulator(journal_path=settings.data_dir / "channel-simulator-journal.jsonl")
    return simulator, WebhookChannel(simulator.url, timeout_s=settings.channel_timeout_s)


HOLDING_MESSAGE = (
    "Uma pessoa da nossa equipe vai responder a sua mensagem em breve. Obrigado por aguardar."
)
"""What a customer whose takeover nobody claimed by its SLA is told, once."""

JOBS_KEPT_S = 7 * 24 * 3600.0
"""How long a done or dropped job stays readable before ``jobs.prune`` deletes it."""
JOBS_PRUNE_EVERY_S = 3600.0


class Backend:
    """Everything one backend process runs. Build with :meth:`open`; ``await start()``."""

    def __init__(self, settings: Settings, guard: Guard) -> None:
        self.settings = settings
        self.guard = guard
        self.db = guard.db
        self.events = guard.events
        # The roster is a projection kept in each append's transaction (issue 14); a data
        # dir whose log predates it is rebuilt from the log once, here.
        self.roster_projection = RosterProjection(
            self.db, self.events, snapshot_every=settings.roster_snapshot_every
        )
        self.events.add_projector(self.roster_projection.apply)
        ensure_current(self.roster_projection)
        self.store = TeamStore(self.events)
        self.pauses = Pauses(self.events)
        self.usage = UsageBook(self.db, prices=settings.model_prices)
        self.budgets = Budgets(self.events, self.usage, settings.agent_budgets)
        self.jobs = Jobs(self.db)  # durable work for every part below (backend/jobs/)
        self.dead_jobs = DeadJobs(self.jobs, self.events)
        self.jobs.on_dead = self.dead_jobs.told  # before any kind registers
        self.jobs.register("jobs.prune", self._prune_jobs, max_attempts=3)
        self.pipeline = InfraPipeline(self.store, settings, auto=True, jobs=self.jobs)
        self.infra_tools = InfraAgentTools(self.pipeline)
        scripts = _scripts(settings)
        # One PR pipeline for every kind: dev task PRs share the infra PRs' gates, jobs
        # and operator actions.
        self.dev_tasks = DevTasks(self.store, settings, pipeline=self.pipeline)
        self.dev_agents = DevAgents(
            settings, self.dev_tasks, scripts=scripts, runtime_options=self._runtime_hooks()
        )
        self.dev_worker = DevWorker(self.dev_agents, settings, self.jobs)
        self.team = TeamService(
            settings,
            self.store,
            scripts=scripts,
            infra_tools=self.infra_tools.registry(),
            infra_planner=self.infra_tools,
            adr_pr=AdrTool(self.pipeline),
            task_creator=task_creator(self.dev_tasks, self.dev_worker.wake),
            dev_turn=self.dev_agents.operator_turn,
            dev_correction=self.dev_agents.correction_turn,
            usage=self.usage.roster_usage,
            roster_facts=self.roster_projection,
        )
        self.team.runtime.install(**self._runtime_hooks())
        slas = Slas(settings.sla)
        self.inbox = Inbox(self.pipeline, self.store, guard, self.dead_jobs, slas)
        self.oncall = OnCall(
            self.db, self.jobs, self.inbox.items, slas, settings, hold=self._hold_message
        )
        self.expiries = Expiries(
            self.jobs,
            self.inbox.items,
            settings.expire,
            lambda ident, who, why: self.decisions.reject(ident, who, why),
            self.store.decline_handoff,
            period_s=settings.oncall_sweep_s,
        )
        self.decisions = Decisions(self.store.approvals, self.pipeline)
        # atendimento is bound like every agent (model_binding → make_provider, per turn).
        self.customer = CustomerService(
            events=self.events,
            orchestrator=guard.orchestrator,
            conversations=guard.conversations,
            providers=self.team._provider,
        )
        self.customer.runtime.install(**self._runtime_hooks())
        self.takeovers = Takeovers(
            interruptions=guard.interruptions,
            conversations=guard.conversations,
            orchestrator=guard.orchestrator,
        )
        self.broadcaster = Broadcaster(self.events)
        self.channel_simulator, self.channel = _channel(settings)
        self.delivery = DeliveryWorker(
            guard.conversations,
            self.channel,
            RetryPolicy(
                base_s=settings.channel_backoff_base_s,
                max_s=settings.channel_backoff_max_s,
                deadline_s=settings.channel_deadline_s,
            ),
            self.jobs,
        )
        guard.metrics.registry.register(
            OnCallGauges(
                self.inbox.items,
                self._agent_statuses,
                guard.ledger.counts if guard.ledger is not None else dict,
            )
        )
        self.token, self.token_generated = resolve_token(settings)
        self.operators = Operators(self.db)  # named accounts beside the bootstrap token
        if guard.orchestrator.uncertain is not None:
            self.jobs.register(
                "reconcile",
                self._reconcile,
                max_attempts=3,
                backoff=Backoff(base_s=1.0, max_s=settings.reconcile_interval_s),
                lease_s=RECONCILE_LEASE_S,
            )
        self._tasks: set[asyncio.Task[Any]] = set()
        self.tools_ready = asyncio.Event()

    def _runtime_hooks(self) -> dict[str, Any]:
        """What every agent runtime of this backend gets (``AgentRuntime.install(**...)`` or
        ``AgentRuntime(..., **...)``): the checks that may refuse a turn — a paused agent
        runs none, then the budget (so a paused agent says it is paused, not over budget) —
        and the sink that records each turn's tokens. Work outside a runtime (the rule-based
        planner) asks the same checks through ``TeamService._check``."""
        return {"checks": [self.pauses.check, self.budgets.check], "usage": self.usage.record}

    @classmethod
    def open(cls, settings: Settings) -> Backend:
        """Open (and migrate) the stores named by ``settings``."""
        secure_data_dir(settings.data_dir)  # 0700; looser files in it tightened, with a warning
        db = open_database(settings.resolved_database_url())
        guard = build_guard(settings, db=db)
        guard._owned.append(db)
        return cls(settings, guard)

    async def start(self) -> None:
        """Start the live broadcast and settle what a crash may have left uncertain."""
        await self.broadcaster.start()
        # A PR's author on a model corrects it in a turn on this loop (see ModelAuthor).
        self.pipeline.author = ModelAuthor(self.team, asyncio.get_running_loop())
        if self.channel_simulator is not None:
            self.channel_simulator.start()
        self.spawn(self._check_scanners(), "check-scanners")
        expired = (
            await asyncio.to_thread(self.guard.ledger.expire_stale) if self.guard.ledger else []
        )
        if expired:
            log.warning(
                "ledger: %d claim(s) found unfinished after a restart are now "
                "resultado_incerto; reconciling every %ss (or `cadencia ledger reconcile`)",
                len(expired),
                self.settings.reconcile_interval_s,
            )
        if "reconcile" in self.jobs.kinds:
            # One row for every process on this database: each tick runs in one of them.
            await asyncio.to_thread(
                self.jobs.every, "reconcile", self.settings.reconcile_interval_s
            )
        await asyncio.to_thread(self.jobs.every, "jobs.prune", JOBS_PRUNE_EVERY_S)
        await asyncio.to_thread(self.oncall.schedule)
        await asyncio.to_thread(self.expiries.schedule)
        self.jobs.start(self.spawn)
        await asyncio.to_thread(self.dev_worker.wake)  # tasks a stop or a crash left waiting
        await asyncio.to_thread(self.delivery.resume)  # and deliveries left pending
        self.spawn(self.roster_projection.snapshots.keep_current(), "roster-snapshots")

    async def _check_scanners(self) -> None:
        """Say at start-up, not at the first PR, that a scanner is missing: the gates install
        nothing at run time (``pip install -e .`` does), so every PR would fail closed."""
        from backend.gates.provision import locate_semgrep

        try:
            located = await asyncio.to_thread(locate_semgrep, self.settings)
            if located.path is None:
                log.error("the SecOps gate cannot pass any PR: %s", located.reason)
        finally:
            self.tools_ready.set()

    def spawn(self, coro: Any, name: str) -> asyncio.Task[Any]:
        """Run ``coro`` in the background; its failure is logged and recorded as an event."""
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("background task %s failed: %r", name, t.exception())
                self.events.append(
                    EventType.BACKEND_TASK_FAILED, {"task": name, "error": repr(t.exception())}
                )

        task.add_done_callback(done)
        return task

    async def stop(self) -> None:
        """Finish in-flight work, deliver every event already logged, close everything."""
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        self.pipeline.author = None
        await self.broadcaster.stop()
        self.channel.close()
        if self.channel_simulator is not None:
            await asyncio.to_thread(self.channel_simulator.stop)
        await asyncio.to_thread(self.guard.close)

    # -- approvals and takeovers -----------------------------------------------------------

    def approvals(self) -> tuple[list[dict[str, Any]], list[Interruption]]:
        """Infra PRs in review and unresolved takeovers, awaiting-human / open first."""
        prs = [a.to_dict() for a in self.pipeline.in_review()]
        prs.sort(key=lambda p: (p["gate_status"] != "awaiting_human", p.get("created_at", "")))
        interruptions = sorted(
            self.guard.interruptions.unresolved(), key=lambda i: (i.status != "open", i.opened_at)
        )
        return prs, interruptions

    def interruption_detail(self, ident: int) -> InterruptionStory:
        """A takeover with its conversation transcript and the ledger's attempt history."""
        interruption = self.guard.interruptions.get(ident)
        transcript = [
            {"role": m["role"], "text": m["text"], "ts": str(m["ts"])}
            for m in self.guard.conversations.transcript(
                interruption.conversa_id, newest=TRANSCRIPT_SHOWN
            )
        ]
        entity_key = tool_spec(interruption.ferramenta).entity_field
        attempts = [
            e.payload
            for e in self.events.of_session(
                interruption.conversa_id, TENTATIVA, newest=TRANSCRIPT_SHOWN
            )
            if e.payload.get("ferramenta") == interruption.ferramenta
            and e.payload.get(entity_key) == interruption.entidade_id
        ]
        facts = self.takeovers.ledger_facts(interruption)
        return InterruptionStory(interruption, transcript, attempts, facts)

    async def resolve_interruption(
        self,
        ident: int,
        operator: str,
        action: Action,
        reply: str | None,
        *,
        valor: Decimal | None = None,
        reason: str | None = None,
    ) -> Resolved:
        """Execute (once, through the ledger), deny or hand back; see :class:`Takeovers`."""
        return await asyncio.to_thread(
            self.takeovers.resolve, ident, operator, action, reply, valor=valor, reason=reason
        )

    def uncertain_items(self) -> list[dict[str, Any]]:
        """Every uncertain ledger claim, oldest first (Approvals' ``uncertain``)."""
        found = self.guard.orchestrator.uncertain
        return [
            {
                "id": item_id(record.chave),
                "chaveIdempotencia": record.chave,
                "pedidoId": record.entidade_id
                if tool_spec(record.ferramenta).entity_field == "pedidoId"
                else None,
                "valor": record.valor,
                "conversaId": record.conversa_id,
                "since": record.updated_at,
                "age_s": round(age, 1),
                "actions": ["reconcile", "settle"],
            }
            for record, age in (found.items() if found is not None else [])
        ]

    def _uncertain_outcomes(self) -> UncertainOutcomes:
        found = self.guard.orchestrator.uncertain
        if found is None:
            raise NotFoundError("this backend runs without a ledger: nothing is uncertain")
        return found

    def reconcile_uncertain(self, ident: str, operator: str) -> Settled:
        """Ask the gateway about one uncertain claim (``ident`` from :func:`item_id`)."""
        return self._uncertain_outcomes().reconcile_one(chave_of(ident), by=operator)

    def settle_uncertain(
        self, ident: str, operator: str, outcome: HandOutcome, reason: str
    ) -> Settled:
        """An operator settles one uncertain claim by hand."""
        return self._uncertain_outcomes().settle(
            chave_of(ident), outcome, operator=operator, reason=reason
        )

    def _hold_message(self, interruption_id: str) -> bool:
        """Tell a customer whose takeover nobody claimed in time that a person will answer
        (once: the on-call outbox sends it once per takeover); not if it was claimed."""
        interruption = self.guard.interruptions.get(int(interruption_id))
        if interruption.status != "open":
            return False
        self.guard.conversations.say(
            interruption.conversa_id, "agente", HOLDING_MESSAGE, agent="oncall"
        )
        return True

    def _agent_statuses(self) -> list[str]:
        """Every agent's status once (``cadencia_agents``): a dev agent per project, the
        others once; ``budget`` for one whose tokens today reached its daily budget."""
        found: dict[tuple[str, str], str] = {}
        projects: list[Any] = list(self.store.projects()) or [None]
        for project in projects:
            for entry in self.team.roster(project.id if project else None):
                agent_id = str(entry["id"])
                scope = project.id if project and agent_id.startswith("dev-") else ""
                found[(scope, agent_id)] = str(entry["status"])
        out = []
        for (_scope, agent_id), status in found.items():
            if status != "paused" and self._over_budget(agent_id):
                status = "budget"
            out.append(status)
        return out

    def _over_budget(self, agent_id: str) -> bool:
        try:
            budget = self.budgets.budget(agent_id)
        except CadenciaError:
            return False
        limit = budget["tokens_per_day"]
        return limit is not None and budget["used_today"] >= limit

    def _prune_jobs(self, job: Job) -> None:
        """The recurring ``jobs.prune``: finished jobs go after :data:`JOBS_KEPT_S`."""
        pruned = self.jobs.prune(JOBS_KEPT_S)
        if pruned:
            log.info("jobs: pruned %d finished job(s)", pruned)

    def _reconcile(self, job: Job) -> None:
        """The recurring ``reconcile`` job: ask the gateway about every uncertain claim.

        Each settlement is a ``ledger.reconciliado`` event (so it is in the feed); a round
        that fails (the database is down) is retried, then waits for the next tick.
        """
        settled = self.guard.orchestrator.reconcile()
        if settled:
            log.info("reconcile: %s", ", ".join(f"{k} → {v}" for k, v in settled))


@dataclass(frozen=True)
class InterruptionStory:
    """A takeover with what an operator reads before acting on it."""

    interruption: Interruption
    transcript: list[dict[str, Any]]
    attempts: list[dict[str, Any]]
    ledger: LedgerFacts | None = None
