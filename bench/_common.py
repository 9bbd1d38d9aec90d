"""Helpers shared by the benchmarks: interleaved timing, moto, JSON and a rich table.

Absolute times on shared machines are noise, so every figure a benchmark reports is a
ratio of two things measured side by side, interleaved in rounds, in the same run.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Rate:
    """Operations and the seconds they took (summed over rounds)."""

    ops: int = 0
    seconds: float = 0.0

    @property
    def per_s(self) -> float:
        """Operations per second."""
        return self.ops / self.seconds if self.seconds else 0.0


@dataclass
class Workload:
    """One measured workload: ``run(n)`` does about ``n`` operations and returns how many it
    did; ``prepare(n)``, when given, makes ``n`` more operations possible (seeding rows an
    operation consumes) and is never timed."""

    run: Callable[[int], int]
    prepare: Callable[[int], None] | None = None


@dataclass
class Interleaved:
    """Run several workloads in alternating, time-boxed rounds so drift hits all alike.

    Within a round the workloads take turns of about ``turn_s`` seconds (chunks of
    ``chunk`` operations) until every one of them has ``round_s`` seconds of timed work: a
    disk that slows down for a moment slows all of them, so their ratio holds, and a round
    of seconds measures the path rather than the luck of a few fsyncs. Report the median
    of the per-round ratios (:func:`median_ratio`): one unlucky round moves a mean, not it.
    """

    rounds: int = 6
    round_s: float = 2.0
    chunk: int = 10
    turn_s: float = 0.05
    per_round: dict[str, list[Rate]] = field(default_factory=dict)

    def run(self, workloads: dict[str, Workload]) -> dict[str, list[Rate]]:
        """Measure every workload ``rounds`` times, interleaved; return each one's rounds."""
        for _ in range(self.rounds):
            rates = {name: Rate() for name in workloads}
            while any(rate.seconds < self.round_s for rate in rates.values()):
                for name, workload in workloads.items():
                    rate, turn = rates[name], 0.0
                    while turn < self.turn_s and rate.seconds < self.round_s:
                        if workload.prepare is not None:
                            workload.prepare(self.chunk)
                        started = time.perf_counter()
                        rate.ops += workload.run(self.chunk)
                        elapsed = time.perf_counter() - started
                        rate.seconds += elapsed
                        turn += elapsed
            for name, rate in rates.items():
                self.per_round.setdefault(name, []).append(rate)
        return self.per_round


def total(rates: list[Rate]) -> Rate:
    """All rounds of one workload as one rate."""
    return Rate(sum(r.ops for r in rates), sum(r.seconds for r in rates))


def median_ratio(numerator: list[Rate], denominator: list[Rate]) -> float:
    """The median over rounds of ``numerator`` per second ÷ ``denominator`` per second, each
    round compared with the same round of the other workload (measured next to it)."""
    pairs = [a.per_s / b.per_s for a, b in zip(numerator, denominator, strict=True) if b.per_s]
    return round(statistics.median(pairs), 3) if pairs else 0.0


def spread(numerator: list[Rate], denominator: list[Rate]) -> tuple[float, float]:
    """The lowest and highest per-round ratio (how stable the median is)."""
    pairs = [a.per_s / b.per_s for a, b in zip(numerator, denominator, strict=True) if b.per_s]
    return (round(min(pairs), 3), round(max(pairs), 3)) if pairs else (0.0, 0.0)


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` rounded for reports (0 when the denominator is 0)."""
    return round(numerator / denominator, 3) if denominator else 0.0


@contextmanager
def moto_server() -> Iterator[str]:
    """moto's server over real HTTP on loopback, with dummy credentials in the environment."""
    from moto.server import ThreadedMotoServer

    os.environ.setdefault("AWS_ACCESS_KEY_ID", "bench")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "bench")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def write_json(path: Path, value: dict[str, Any]) -> None:
    """Write the result atomically."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def print_table(title: str, rows: list[tuple[str, str, str]]) -> None:
    """A rich table of ``(figure, value, target)`` rows."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_column("target", justify="right")
    for row in rows:
        table.add_row(*row)
    Console().print(table)
