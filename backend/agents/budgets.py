"""Per-agent token budgets (tokens per UTC day) and the turn check that enforces them.

The budget of an agent is, first, what an operator set (``POST /api/agents/{id}/budget``,
stored in ``agent_budgets``), else ``CADENCIA_AGENT_BUDGETS`` by exact id, then ``dev-*``
for a dev agent, then ``*``; no entry means no budget. :meth:`Budgets.check` is a
:data:`~backend.agents.runtime.TurnCheck`: a turn is refused (409 ``budget_exceeded``)
once the agent's tokens today, in every project, reach the budget. The first refusal of
the day appends ``agent.budget_exceeded`` and ``agent.status`` blocked/``budget`` (the
roster), once: ``agent_budget_stops`` remembers the day. Raising the budget above what was
used clears the stop, so the agent runs again (``agent.status`` idle).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from backend.agents.team import DEV_PREFIX, agent
from backend.agents.usage import UsageBook
from backend.events import EventLog, EventType, utcnow_iso
from backend.exceptions import BudgetExceededError, ValidationError

Source = Literal["settings", "operator"]
BUDGET_DETAIL = "budget"
"""``agent.status`` detail (and the roster's) of an agent its budget stopped."""


class Budgets:
    """Budgets from the settings and the operators, checked before every turn."""

    def __init__(
        self, events: EventLog, usage: UsageBook, settings: Mapping[str, int] | None = None
    ) -> None:
        self.events = events
        self.db = events.db
        self.usage = usage
        self.settings = dict(settings or {})

    def _from_settings(self, agent_id: str) -> int | None:
        keys = [agent_id, *([f"{DEV_PREFIX}*"] if agent_id.startswith(DEV_PREFIX) else []), "*"]
        for key in keys:
            if self.settings.get(key):
                return int(self.settings[key])
        return None

    def _stored(self, agent_id: str) -> dict[str, Any] | None:
        with self.db.transaction(write=False) as tx:
            return tx.one("budget_get", {"agent": agent_id})

    def _limit(self, agent_id: str) -> tuple[dict[str, Any] | None, int | None, Source | None]:
        """The operator's row (if any), the daily limit in force and where it comes from."""
        stored = self._stored(agent_id)
        if stored is not None:
            return stored, int(stored["tokens_per_day"]), "operator"
        limit = self._from_settings(agent_id)
        return None, limit, "settings" if limit is not None else None

    def budget(self, agent_id: str) -> dict[str, Any]:
        """``GET /api/agents/{id}/budget``.

        Raises:
            NotFoundError: unknown agent.
        """
        agent(agent_id)
        stored, limit, source = self._limit(agent_id)
        return {
            "agent": agent_id,
            "tokens_per_day": limit,
            "used_today": self.usage.used(agent_id),
            "source": source,
            "raised_by": stored["raised_by"] if stored else None,
        }

    def set_budget(
        self, agent_id: str, operator: str, tokens_per_day: int, reason: str | None = None
    ) -> dict[str, Any]:
        """An operator sets (typically raises) an agent's daily budget.

        Raises:
            NotFoundError: unknown agent.
            ValidationError: no operator, or ``tokens_per_day`` not a positive integer.
        """
        agent(agent_id)
        operator = (operator or "").strip()
        if not operator:
            raise ValidationError("operator is required")
        if isinstance(tokens_per_day, bool) or int(tokens_per_day) <= 0:
            raise ValidationError("tokens_per_day must be a positive integer")
        before = self.budget(agent_id)
        today = self.usage.today()
        events = []
        with self.db.transaction() as tx:
            tx.execute(
                "budget_set",
                {
                    "agent": agent_id,
                    "tokens_per_day": int(tokens_per_day),
                    "raised_by": operator,
                    "reason": reason,
                    "now": utcnow_iso(),
                },
            )
            events.append(
                self.events.append_in(
                    tx,
                    EventType.AGENT_BUDGET_CHANGED,
                    {
                        "operator": operator,
                        "tokens_per_day": int(tokens_per_day),
                        "previous": before["tokens_per_day"],
                        "used_today": before["used_today"],
                        "reason": reason,
                    },
                    agent=agent_id,
                )
            )
            if before["used_today"] < int(tokens_per_day) and tx.execute(
                "budget_stop_clear", {"agent": agent_id, "day": today}
            ):
                # It was stopped today and may run again: the roster leaves "blocked".
                events.append(
                    self.events.append_in(
                        tx,
                        EventType.AGENT_STATUS,
                        {"status": "idle", "detail": f"budget raised by {operator}"},
                        agent=agent_id,
                    )
                )
        self.events.publish(events)
        return self.budget(agent_id)

    def check(self, ctx: Any) -> None:
        """Refuse the turn when the agent's budget for today is spent (a TurnCheck).

        Raises:
            BudgetExceededError: tokens used today >= the budget.
        """
        # The limit alone: today's usage is read once, and only when there is a limit.
        _, limit, _ = self._limit(ctx.agent_id)
        if limit is None:
            return
        today = self.usage.today()
        used = self.usage.used(ctx.agent_id, today)
        if used < limit:
            return
        events = []
        with self.db.transaction() as tx:
            first = tx.execute(
                "budget_stop_once",
                {
                    "agent": ctx.agent_id,
                    "day": today,
                    "budget": limit,
                    "used": used,
                    "now": utcnow_iso(),
                },
            )
            if first:
                where = {"project_id": ctx.project_id, "session_id": ctx.session_id}
                events.append(
                    self.events.append_in(
                        tx,
                        EventType.AGENT_BUDGET_EXCEEDED,
                        {"day": today, "tokens_per_day": limit, "used_today": used},
                        agent=ctx.agent_id,
                        **where,
                    )
                )
                events.append(
                    self.events.append_in(
                        tx,
                        EventType.AGENT_STATUS,
                        {"status": "blocked", "detail": BUDGET_DETAIL},
                        agent=ctx.agent_id,
                        **where,
                    )
                )
        self.events.publish(events)
        raise BudgetExceededError(
            f"{ctx.agent_id} used {used} of its {limit} tokens for {today} (UTC); "
            "an operator can raise its budget",
            agent=ctx.agent_id,
            day=today,
        )
