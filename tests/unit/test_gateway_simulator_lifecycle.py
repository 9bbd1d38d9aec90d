"""The gateway simulator starts and stops fast: every guard test starts one."""

from __future__ import annotations

import statistics
import time

import httpx
import pytest

from backend.gateway.simulator import GatewaySimulator


def test_stop_returns_within_a_few_polls() -> None:
    """socketserver's default 0.5 s poll made each stop take half a second."""
    took = []
    for _ in range(3):
        sim = GatewaySimulator("s3cret").start()
        assert httpx.get(f"{sim.url}/v1/journal", timeout=5).json() == []
        started = time.perf_counter()
        sim.stop()
        took.append(time.perf_counter() - started)
    assert statistics.median(took) < 0.3, took


def test_a_stopped_simulator_refuses_connections() -> None:
    sim = GatewaySimulator("s3cret").start()
    url = sim.url
    sim.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/v1/journal", timeout=2)
