"""Settings for every part of the backend, read from ``CADENCIA_*`` env vars.

Build one with :func:`load_settings`; nothing reads the environment at import time.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

import platformdirs
from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from backend.sla import DEFAULT_SLA, parse_duration


def default_data_dir() -> Path:
    """The user's data directory for cadencia (``~/.local/share/cadencia`` on Linux)."""
    return Path(platformdirs.user_data_dir("cadencia", appauthor=False))


class ModelPrice(BaseModel):
    """Dollars per million tokens of one model (``CADENCIA_MODEL_PRICES``)."""

    model_config = ConfigDict(extra="forbid")

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)


class Settings(BaseSettings):
    """Everything configurable. Every field has a sane default for a fresh machine."""

    model_config = SettingsConfigDict(env_prefix="CADENCIA_", extra="ignore")

    data_dir: Path = Field(default_factory=default_data_dir)
    """Made absolute once, when the settings are read: a relative ``--data-dir`` must not
    become ``sqlite:///rel/…`` (which is the absolute ``/rel/…``) while the token lands in
    ``./rel``."""
    database_url: str | None = None
    """State + event log + ERP. Default: ``sqlite:///<data_dir>/cadencia.sqlite3``."""
    database_password: str | None = Field(default=None, repr=False)
    """PostgreSQL password when the URL has none (``CADENCIA_DATABASE_PASSWORD``); libpq's
    ``PGPASSWORD`` and ``PGPASSFILE`` work too. Never put it in ``--database``: argv is
    readable by every local user."""
    database_password_file: Path | None = None
    """A file holding that password (``CADENCIA_DATABASE_PASSWORD_FILE``, e.g. a secret
    mounted by the orchestrator)."""
    role_prefix: str = Field(default="cadencia_agente", pattern=r"^[a-z_][a-z0-9_]{0,40}$")
    """PostgreSQL tool roles are ``<prefix>_consulta`` etc. (``CADENCIA_ROLE_PREFIX``): give
    each deployment sharing a cluster its own, or each start re-passwords the other's."""
    ledger_url: str | None = None
    """Idempotency ledger. Default: the state database. ``dynamodb://TABLE?endpoint_url=&region=``."""
    token: str | None = None
    model: str = "scripted"
    """Default model provider for agents (``scripted``, ``bedrock:MODEL_ID``, ``openai:MODEL``)."""
    agent_models: dict[str, str] = Field(default_factory=lambda: {"infra": "planner"})
    """Per-agent overrides (env: JSON). The Infra agent defaults to the rule-based planner."""
    scripts_path: Path | None = None
    """JSON script for ``scripted`` agents (default: the demo script shipped with the backend)."""

    openai_base_url: str | None = None
    """Base URL of an OpenAI-compatible endpoint (``…/v1``) for ``openai:MODEL`` bindings."""
    openai_api_key: str | None = None
    openai_timeout_s: float = 60.0
    provider_retries: int = Field(default=4, ge=0, le=20)
    """Retries of one model call after a 429, 5xx, throttling, transport error or timeout."""
    provider_backoff_s: float = Field(default=0.5, ge=0)
    """Base of the exponential backoff (full jitter) between model-call retries."""
    provider_backoff_max_s: float = Field(default=8.0, ge=0)
    provider_deadline_s: float = Field(default=120.0, gt=0)
    """One model call, all its retries included, gives up after this many seconds."""
    model_prices: dict[str, ModelPrice] = Field(default_factory=dict)
    """``{"<spec or model>": {"input_per_mtok", "output_per_mtok"}}`` (env: JSON), dollars
    per million tokens, for the usage's cost estimate; a model not listed costs null."""
    agent_budgets: dict[str, PositiveInt] = Field(default_factory=dict)
    """``{"<agent id>|dev-*|*": tokens_per_day}`` (env: JSON), UTC days; none by default."""

    host: str = "127.0.0.1"
    port: int = 8765

    teto_de_voltas: int = Field(default=4, ge=1, le=100)
    """Loop ceiling: attempts per (conversa, entidade, ferramenta) before a human takes over."""
    ledger_lease_seconds: float = Field(default=30.0, gt=0)
    """A claim older than this that never completed is treated as ``resultado_incerto``."""
    reconcile_interval_s: float = Field(default=60.0, gt=0)
    """How often ``cadencia serve`` asks the gateway about every uncertain ledger claim."""
    gate_correction_limit: int = Field(default=3, ge=1)
    gate_lease_s: float = Field(default=60.0, gt=0)
    """How long a ``gates`` job's claim holds without a heartbeat (the worker beats every
    third of it while the scanners run). After a crash the job runs again once this expires."""
    gate_max_attempts: int = Field(default=3, ge=1)
    """Attempts of one gate job (a crash or a run that raised costs one) before it is dead
    and left to an operator (the inbox's ``job_dead``, ``POST /api/prs/{id}/rerun``)."""
    dev_lease_s: float = Field(default=60.0, gt=0)
    """How long a module's ``dev`` job holds without a heartbeat (beaten every third of it
    during the turn). After a crash the task runs again once this expires."""
    dev_sweep_s: float | None = Field(default=None, gt=0)
    """How long a module waits after a failed turn before its next try (default: a twelfth
    of ``dev_lease_s``); creating a task or activating execution starts it at once."""
    dev_max_attempts: int = Field(default=3, ge=1)
    """Failed turns on one task (provider down, a crash) before the task is ``blocked``."""

    roster_snapshot_every: int = Field(default=1000, ge=1)
    """Events between two snapshots of the roster projection (``GET /api/roster?at=N``
    replays at most this many events after the nearest snapshot)."""

    gateway_url: str | None = None
    """Payment gateway base URL. Default: a local simulator started in-process."""
    gateway_timeout_s: float = 5.0
    gateway_settle_s: float = Field(default=300.0, ge=0)
    """How long after a refund request the gateway may still debit it: reconcile records
    ``falhou`` for a key the gateway does not know only once this long has passed."""
    gateway_secret_id: str = "cadencia/gateway-pagamento"
    channel_webhook_url: str | None = None
    """Where customers' outbound messages are POSTed (JSON, one per message, with an
    ``Idempotency-Key``). Default: a local channel simulator started in-process."""
    channel_timeout_s: float = Field(default=5.0, gt=0)
    channel_deadline_s: float = Field(default=60.0, ge=0)
    """How long one message's delivery is retried before it is recorded ``failed``."""
    channel_backoff_base_s: float = Field(default=0.5, gt=0)
    channel_backoff_max_s: float = Field(default=10.0, gt=0)
    secrets_backend: str = "file"
    """``file`` (data dir, mode 0600) or ``aws`` (Secrets Manager)."""

    aws_region: str = "us-east-1"
    aws_endpoint_url: str | None = None
    """For moto or LocalStack; applies to every boto3 client built from these settings."""
    cloudwatch_enabled: bool = False
    iam_auth: bool = False
    """PostgreSQL tool roles authenticate with RDS IAM tokens instead of passwords."""

    max_body_bytes: int = 1_000_000
    semgrep_bin: str | None = None
    """Another semgrep than the one installed with the project; a path that does not exist
    makes semgrep missing (the gate fails closed), never a fallback to another one."""

    @field_validator("data_dir", mode="after")
    @classmethod
    def _absolute_data_dir(cls, value: Path) -> Path:
        return Path(os.path.abspath(value.expanduser()))

    @field_validator("expire", mode="before")
    @classmethod
    def _expire_durations(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        never = sorted(str(k) for k in value if k not in ("action_approval", "handoff"))
        if never:
            raise ValueError(
                f"{never} cannot expire: only action_approval and handoff do (a refund, a "
                "takeover and a PR escalate instead)"
            )
        return {k: parse_duration(v) for k, v in value.items()}

    @field_validator("sla", mode="before")
    @classmethod
    def _sla_durations(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value  # pydantic says what is wrong with it
        kinds = set(DEFAULT_SLA)
        unknown = sorted(str(k) for k in value if k not in kinds)
        if unknown:
            raise ValueError(f"unknown inbox kind(s) {unknown}; known: {sorted(kinds)}")
        return {k: parse_duration(v) for k, v in value.items()}

    # -- operators --
    required_approvals: dict[Literal["infra", "dev", "adr"], Annotated[int, Field(ge=1, le=10)]] = (
        Field(default_factory=dict)
    )
    """``{"<pr kind>": N}`` (env: JSON): approvals by N different operators before a PR of
    that kind merges (default 1 per kind), checked at start."""
    sla: dict[str, float] = Field(default_factory=dict)
    """``{"<inbox kind>": "90s" | "5m" | "4h" | seconds}`` (env ``CADENCIA_SLA``: JSON): how
    long an item of that kind may wait for a human; the rest keep the defaults
    (:data:`backend.sla.DEFAULT_SLA`)."""
    expire: dict[str, float] = Field(default_factory=dict)
    """``{"action_approval" | "handoff": duration}`` (env ``CADENCIA_EXPIRE``: JSON): a held
    action or an offered handoff undecided that long is denied by ``system`` ("expired").
    Off by default; a refund, a takeover and a PR never expire."""
    pagerduty_routing_key: str | None = None
    """PagerDuty Events API v2 integration key: items past their SLA page it (``trigger``),
    a claim acknowledges, leaving the inbox resolves, all with ``dedup_key`` = the item id."""
    pagerduty_escalation_key: str | None = None
    """A second integration key paged (``critical``) when an item reaches twice its SLA."""
    pagerduty_url: str = "https://events.pagerduty.com/v2/enqueue"
    """Where Events API v2 events go (a test or a proxy may point elsewhere)."""
    notify_webhook_url: str | None = None
    """A Slack-compatible incoming webhook told of each new item, its breach, its end."""
    oncall_sweep_s: float = Field(default=1.0, gt=0, le=60)
    """How often the on-call sweep compares the inbox with what was sent."""
    public_url: str | None = None
    """How people reach this backend (links in pages); default ``http://<host>:<port>``."""
    public_docs: bool = False
    """Serve ``/docs`` and ``/openapi.json`` without a token (default: behind the token)."""
    metrics_access: Literal["open", "loopback", "token"] = "loopback"
    """``/metrics``: open to anyone, open to loopback clients only (others need the token),
    or always behind the token."""

    def resolved_database_url(self) -> str:
        """The state database URL, defaulting to a SQLite file in the data dir."""
        if self.database_url:
            from backend.store.credentials import with_password

            return with_password(
                self.database_url, self.database_password, self.database_password_file
            )
        return f"sqlite:///{self.data_dir / 'cadencia.sqlite3'}"

    def resolved_dev_sweep_s(self) -> float:
        """The wait after a failed dev turn (see :attr:`dev_sweep_s`)."""
        return self.dev_sweep_s or self.dev_lease_s / 12

    def resolved_ledger_url(self) -> str:
        """The ledger URL, defaulting to the state database."""
        if self.ledger_url:
            from backend.store.credentials import with_password

            return with_password(
                self.ledger_url, self.database_password, self.database_password_file
            )
        return self.resolved_database_url()

    def boto3_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``boto3.client(...)`` honouring region and endpoint."""
        kwargs: dict[str, Any] = {"region_name": self.aws_region}
        if self.aws_endpoint_url:
            kwargs["endpoint_url"] = self.aws_endpoint_url
        return kwargs


def load_settings(**overrides: Any) -> Settings:
    """Read settings from the environment, then apply non-None ``overrides``."""
    clean = {k: v for k, v in overrides.items() if v is not None}
    try:
        settings = Settings(**clean)
    except ValidationError as exc:
        # A wrong setting stops the start with the setting's own message, not a traceback.
        from backend.exceptions import ConfigError

        wrong = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid settings: {wrong}") from exc
    settings.data_dir = Path(os.path.abspath(Path(settings.data_dir).expanduser()))
    return settings
