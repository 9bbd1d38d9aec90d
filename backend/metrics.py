"""Operational metrics: Prometheus text always, CloudWatch too when configured.

``InterrupcoesPorTeto`` is the signal that an agent's reasoning loop misbehaved (Lab 87):
it counts every attempt stopped by the teto de voltas, per tool.
"""

from __future__ import annotations

import logging
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, generate_latest

log = logging.getLogger(__name__)

NAMESPACE = "Cadencia/AgenteAtendimento"
METRIC_TETO = "InterrupcoesPorTeto"


class MetricSink(Protocol):
    """Somewhere an interruption can be reported to."""

    def interrupcao_por_teto(self, ferramenta: str) -> None:
        """Count one attempt blocked by the loop ceiling."""
        ...


class Metrics:
    """A per-app Prometheus registry plus optional extra sinks (e.g. CloudWatch)."""

    def __init__(self, sinks: list[MetricSink] | None = None) -> None:
        self.registry = CollectorRegistry()
        self.teto = Counter(
            "cadencia_interrupcoes_por_teto",
            "Tool attempts stopped by the teto de voltas (InterrupcoesPorTeto)",
            ["ferramenta"],
            registry=self.registry,
        )
        self.tool_attempts = Counter(
            "cadencia_tentativas_de_ferramenta",
            "Tool attempts by tool and resultado",
            ["ferramenta", "resultado"],
            registry=self.registry,
        )
        self.sinks = list(sinks or [])

    def interrupcao_por_teto(self, ferramenta: str) -> None:
        """Count one interruption everywhere; a failing remote sink is logged, not raised."""
        self.teto.labels(ferramenta=ferramenta).inc()
        for sink in self.sinks:
            try:
                sink.interrupcao_por_teto(ferramenta)
            except Exception:
                log.exception("metric sink %s failed", type(sink).__name__)

    def tentativa(self, ferramenta: str, resultado: str) -> None:
        """Count one tool attempt by its resultado."""
        self.tool_attempts.labels(ferramenta=ferramenta, resultado=resultado).inc()

    def prometheus_text(self) -> bytes:
        """The registry in Prometheus' text exposition format."""
        return generate_latest(self.registry)
