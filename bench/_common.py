"""Helpers shared by the benchmarks: interleaved timing, moto, JSON and a rich table.

Absolute times on shared machines are noise, so every figure a benchmark reports is a
ratio of two things measured side by side, interleaved in rounds, in the same run.
"""

from __future__ import annotations

import json
import os
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
class Interleaved:
    """Run several workloads in alternating rounds so drift hits all of them alike."""

    rounds: int = 3
    rates: dict[str, Rate] = field(default_factory=dict)

    def run(self, workloads: dict[str, Callable[[int], int]]) -> dict[str, Rate]:
        """Each workload gets ``round`` (0-based) and returns how many operations it ran."""
        for round_no in range(self.rounds):
            for name, workload in workloads.items():
                started = time.perf_counter()
                ops = workload(round_no)
                rate = self.rates.setdefault(name, Rate())
                rate.ops += ops
                rate.seconds += time.perf_counter() - started
        return self.rates


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
