"""Tokens the model providers reported, per UTC day, project, agent and model spec.

:meth:`UsageBook.record` is the runtime's :data:`~backend.agents.runtime.UsageSink`: after
each turn it adds the turn's tokens to one row of ``agent_usage`` (migration 0011), so the
roster and ``GET /api/usage`` sum a handful of rows instead of scanning the event log. The
``agent.turn`` event keeps the same numbers per turn. Costs are an estimate from the price
table (:func:`price_keys`); a model with no price costs ``None`` — unknown, not free.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from backend.clock import utc_iso
from backend.exceptions import ValidationError
from backend.store.db import Database, Row

if TYPE_CHECKING:
    from backend.store.uow import Work

NO_PROJECT = ""
"""``agent_usage.project_id`` of turns outside a project (customer conversations)."""

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """Now, timezone-aware UTC (the default clock)."""
    return datetime.now(UTC)


def parse_day(value: str | None) -> str | None:
    """A ``YYYY-MM-DD`` day, or None.

    Raises:
        ValidationError: not a calendar day in that form.
    """
    if value is None or value == "":
        return None
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError as exc:
        raise ValidationError(f"day must be YYYY-MM-DD, got {value!r}", day=value) from exc


def price_keys(spec: str) -> list[str]:
    """Where a spec's price may be listed, most specific first.

    The price table is ``CADENCIA_MODEL_PRICES`` (dollars per million tokens), looked up by the
    full spec (``openai:gpt-4.1-mini@http://h/v1``), the spec without its base URL
    (``openai:gpt-4.1-mini``), then the bare model (``gpt-4.1-mini``). A model with no price
    costs ``None`` — unknown, not free — and so does any sum that includes it.
    """
    spec = spec.strip()
    keys = [spec]
    kind, _, rest = spec.partition(":")
    if rest:
        model = rest.partition("@")[0]
        keys += [f"{kind}:{model}", model]
    return list(dict.fromkeys(keys))


class UsageBook:
    """Records and sums model usage; prices it.

    Args:
        db: the state database (migration 0011 applied).
        prices: ``{spec or model: {"input_per_mtok", "output_per_mtok"}}`` (a mapping or
            an object with those attributes, e.g. :class:`backend.settings.ModelPrice`).
        clock: the time that decides today's UTC day.
    """

    def __init__(
        self, db: Database, *, prices: Mapping[str, Any] | None = None, clock: Clock = utc_now
    ) -> None:
        self.db = db
        self.prices = dict(prices or {})
        self.clock = clock

    def today(self) -> str:
        """Today's UTC day, ``YYYY-MM-DD``."""
        return self.clock().astimezone(UTC).date().isoformat()

    def record(
        self, ctx: Any, spec: str, usage: Mapping[str, int], *, tx: Work | None = None
    ) -> None:
        """Add one turn of ``ctx.agent_id`` (the runtime's usage sink).

        With ``tx`` (the turn's closing unit of work) the row commits with the turn's
        ``agent.turn`` event instead of on its own.
        """
        now = self.clock().astimezone(UTC)
        params = {
            "day": now.date().isoformat(),
            "project_id": ctx.project_id or NO_PROJECT,
            "agent": ctx.agent_id,
            "model": spec,
            "input_tokens": max(0, int(usage.get("input_tokens", 0))),
            "output_tokens": max(0, int(usage.get("output_tokens", 0))),
            "now": utc_iso(now),
        }
        joined = tx.tx_for(self.db) if tx is not None else None
        if joined is not None:
            joined.execute("usage_record", params)
            return
        with self.db.transaction() as own:
            own.execute("usage_record", params)

    def used(self, agent_id: str, day: str | None = None) -> int:
        """Tokens (in + out) ``agent_id`` used on ``day`` (default today), every project."""
        with self.db.transaction(write=False) as tx:
            row = tx.one("usage_agent_day", {"agent": agent_id, "day": day or self.today()})
        return int(row["used"]) if row else 0

    def cost(self, spec: str, input_tokens: int, output_tokens: int) -> float | None:
        """Estimated dollars for these tokens on ``spec``; None when it has no price."""
        for key in price_keys(spec):
            price = self.prices.get(key)
            if price is not None:
                return round(
                    input_tokens * _field(price, "input_per_mtok") / 1e6
                    + output_tokens * _field(price, "output_per_mtok") / 1e6,
                    6,
                )
        return None

    def rows(
        self, *, project_id: str | None = None, agent: str | None = None, day: str | None = None
    ) -> list[Row]:
        """Summed rows per (project, agent, model) matching the filters (None: any)."""
        with self.db.transaction(write=False) as tx:
            return tx.all("usage_rows", {"project_id": project_id, "agent": agent, "day": day})

    def roster_usage(self, project_id: str | None) -> dict[str, dict[str, Any]]:
        """Today's usage per agent for a project's roster: its own rows plus those outside
        any project (the customer-service agent's)."""
        today = self.today()
        found: dict[str, list[Row]] = {}
        for project in dict.fromkeys([project_id or NO_PROJECT, NO_PROJECT]):
            for row in self.rows(project_id=project, day=today):
                found.setdefault(str(row["agent"]), []).append(row)
        return {agent: self._sum(rows) for agent, rows in found.items()}

    def report(
        self, *, project_id: str | None = None, agent: str | None = None, day: str | None = None
    ) -> dict[str, Any]:
        """``GET /api/usage``: per agent (and model), per project, and the total."""
        day = parse_day(day)
        rows = self.rows(project_id=project_id, agent=agent, day=day)
        agents: list[dict[str, Any]] = []
        by_project: dict[str, list[Row]] = {}
        for row in rows:
            agents.append(
                {
                    "agent": row["agent"],
                    "project_id": row["project_id"] or None,
                    "model": row["model"],
                    **self._sum([row]),
                    "turns": int(row["turns"]),
                }
            )
            by_project.setdefault(str(row["project_id"]), []).append(row)
        projects = [
            {"project_id": pid or None, **self._sum(group), "turns": _turns(group)}
            for pid, group in by_project.items()
        ]
        return {
            "day": day,
            "agents": agents,
            "projects": projects,
            "total": {**self._sum(rows), "turns": _turns(rows)},
        }

    def _sum(self, rows: Iterable[Row]) -> dict[str, Any]:
        tokens_in = tokens_out = 0
        cost: float | None = 0.0
        for row in rows:
            i, o = int(row["input_tokens"]), int(row["output_tokens"])
            tokens_in, tokens_out = tokens_in + i, tokens_out + o
            priced = self.cost(str(row["model"]), i, o)
            cost = None if cost is None or priced is None else cost + priced
        return {
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "cost_usd": round(cost, 6) if cost is not None else None,
        }


def _turns(rows: Iterable[Row]) -> int:
    return sum(int(r["turns"]) for r in rows)


def _field(price: Any, name: str) -> float:
    value = price.get(name) if isinstance(price, Mapping) else getattr(price, name)
    return float(value or 0.0)
