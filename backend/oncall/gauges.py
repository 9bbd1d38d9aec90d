"""Prometheus gauges read from the database at scrape time, never kept in memory.

Each scrape counts the inbox by kind and SLA state, the oldest item's age per kind, the
agents by status and the ledger's claims by state. Every ``serve`` on one database therefore
reports the same figures, whichever one Prometheus asks, and a restart loses nothing.
Every label value a rule may name is always present (zero when nothing matches), so an
alert on ``> 0`` never waits for a series to appear.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from backend.sla import DEFAULT_SLA

SLA_STATES = ("ok", "warning", "breached")
AGENT_STATUSES = ("working", "idle", "blocked", "paused", "offline", "error", "budget")
CLAIM_STATES = ("tentando", "executado", "falhou", "resultado_incerto")


class OnCallGauges(Collector):
    """The gauges of one backend (see the module docstring).

    Args:
        inbox_items: the inbox, most urgent first (items with ``kind``, ``sla_state``, ``age_s``).
        agents: every agent's status once (``budget`` for one over its daily budget).
        claims: the ledger's claims by state (``{}`` without a ledger).
    """

    def __init__(
        self,
        inbox_items: Callable[[], list[Any]],
        agents: Callable[[], list[str]],
        claims: Callable[[], dict[str, int]],
    ) -> None:
        self.inbox_items = inbox_items
        self.agents = agents
        self.claims = claims

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """One reading of each gauge (called by the registry at every scrape)."""
        items = self.inbox_items()
        counted = Counter((i.kind, i.sla_state) for i in items)
        waiting = GaugeMetricFamily(
            "cadencia_inbox_items",
            "Items waiting for a human, by inbox kind and SLA state",
            labels=["kind", "sla_state"],
        )
        oldest = GaugeMetricFamily(
            "cadencia_inbox_oldest_age_seconds",
            "Age of the oldest item waiting for a human, by inbox kind (0 when none)",
            labels=["kind"],
        )
        for kind in DEFAULT_SLA:
            for state in SLA_STATES:
                waiting.add_metric([kind, state], counted[(kind, state)])
            ages = [i.age_s for i in items if i.kind == kind]
            oldest.add_metric([kind], max(ages, default=0.0))
        yield waiting
        yield oldest
        statuses = Counter(self.agents())
        agents = GaugeMetricFamily(
            "cadencia_agents", "Agents by status (budget: over its daily budget)", labels=["status"]
        )
        for status in AGENT_STATUSES:
            agents.add_metric([status], statuses[status])
        yield agents
        found = self.claims()
        claims = GaugeMetricFamily(
            "cadencia_ledger_claims", "Idempotency ledger claims by state", labels=["state"]
        )
        for state in CLAIM_STATES:
            claims.add_metric([state], found.get(state, 0))
        yield claims
