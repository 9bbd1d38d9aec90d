"""Assemble the guard (ledger, tools, gateway, events, takeovers) from settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from backend.erp.roles import credential_fn, ensure_tool_roles
from backend.events import EventLog
from backend.gateway.simulator import GatewaySimulator
from backend.guard.conversations import Conversations
from backend.guard.interruptions import Interruptions
from backend.guard.orchestrator import Architecture, Orchestrator
from backend.guard.toolbox import Toolbox
from backend.ledger.base import Ledger
from backend.metrics import Metrics, MetricSink
from backend.secrets.base import FileSecretStore, SecretStore, make_secret_store
from backend.settings import Settings
from backend.store.db import Database, PostgresDatabase, open_database
from backend.store.migrate import migrate


@dataclass
class Guard:
    """Everything a customer-service turn needs; :meth:`close` releases it all."""

    settings: Settings
    db: Database
    events: EventLog
    ledger: Ledger | None
    interruptions: Interruptions
    conversations: Conversations
    toolbox: Toolbox
    orchestrator: Orchestrator
    metrics: Metrics
    secrets: SecretStore
    simulator: GatewaySimulator | None = None
    _owned: list[Any] = field(default_factory=list)

    def close(self) -> None:
        """Stop the simulator and close connections."""
        self.toolbox.close()
        if self.simulator is not None:
            self.simulator.stop()
        for thing in self._owned:
            thing.close()


def _metric_sinks(settings: Settings) -> list[MetricSink]:
    if not settings.cloudwatch_enabled:
        return []
    import boto3

    from backend.metrics_cloudwatch import CloudWatchSink

    return [CloudWatchSink(boto3.client("cloudwatch", **settings.boto3_kwargs()))]


def build_guard(
    settings: Settings,
    *,
    architecture: Architecture = "producao",
    db: Database | None = None,
    events: EventLog | None = None,
    secrets: SecretStore | None = None,
    metrics: Metrics | None = None,
) -> Guard:
    """Open (and migrate) the state database, the ledger and the gateway from ``settings``.

    When ``settings.gateway_url`` is unset, a local gateway simulator starts on loopback
    with the gateway secret from the secret store (generated on first use).
    """
    owned: list[Any] = []
    if db is None:
        db = open_database(settings.resolved_database_url())
        owned.append(db)
    migrate(db)
    secrets = secrets or make_secret_store(settings)
    credential = None
    if isinstance(db, PostgresDatabase):
        ensure_tool_roles(db, secrets, iam_auth=settings.iam_auth, prefix=settings.role_prefix)
        credential = credential_fn(settings, secrets, db.url)
    events = events or EventLog(db)
    ledger = None
    if architecture == "producao":
        from backend.ledger.factory import open_ledger

        ledger_url = settings.resolved_ledger_url()
        ledger = open_ledger(ledger_url, settings, db=db if ledger_url == db.url else None)
    simulator = None
    gateway_url = settings.gateway_url
    if gateway_url is None:
        if isinstance(secrets, FileSecretStore):
            gateway_secret = secrets.ensure(settings.gateway_secret_id)
        else:
            gateway_secret = secrets.get(settings.gateway_secret_id)
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        simulator = GatewaySimulator(
            gateway_secret, journal_path=settings.data_dir / "gateway-simulator-journal.jsonl"
        ).start()
        gateway_url = simulator.url
    toolbox = Toolbox(
        db,
        credential=credential,
        gateway_url=gateway_url,
        secret_store=secrets,
        gateway_secret_id=settings.gateway_secret_id,
        gateway_timeout_s=settings.gateway_timeout_s,
        gateway_identity=simulator.identity if simulator is not None else None,
        gateway_settle_s=settings.gateway_settle_s,
    )
    metrics = metrics or Metrics(_metric_sinks(settings))
    interruptions = Interruptions(events)
    conversations = Conversations(db, events)
    orchestrator = Orchestrator(
        ledger=ledger,
        events=events,
        interruptions=interruptions,
        toolbox=toolbox,
        metrics=metrics,
        architecture=architecture,
        conversations=conversations,
    )
    return Guard(
        settings=settings,
        db=db,
        events=events,
        ledger=ledger,
        interruptions=interruptions,
        conversations=conversations,
        toolbox=toolbox,
        orchestrator=orchestrator,
        metrics=metrics,
        secrets=secrets,
        simulator=simulator,
        _owned=owned,
    )
