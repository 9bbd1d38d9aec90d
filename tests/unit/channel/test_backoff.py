"""The delivery retry schedule: exponential, capped, jittered, bounded by a deadline."""

from __future__ import annotations

import random

import pytest

from backend.channel.base import RetryPolicy


def test_ceiling_doubles_then_stays_at_the_cap() -> None:
    policy = RetryPolicy(base_s=0.5, max_s=4.0, deadline_s=60)
    assert [policy.ceiling(n) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]


def test_delays_are_full_jitter_within_the_ceiling() -> None:
    policy = RetryPolicy(base_s=1.0, max_s=8.0, deadline_s=1000)
    rng = random.Random(7)
    for n in range(8):
        draws = [policy.next_delay(n, 0.0, rng) for _ in range(200)]
        assert all(d is not None and 0.0 <= d <= policy.ceiling(n) for d in draws)
        # jittered: senders that failed together do not retry in lockstep
        assert len(set(draws)) > 150


def test_no_retry_once_it_would_start_after_the_deadline() -> None:
    policy = RetryPolicy(base_s=1.0, max_s=1.0, deadline_s=10)
    rng = random.Random(1)
    assert policy.next_delay(3, 10.0, rng) is None
    assert policy.next_delay(0, 20.0, rng) is None
    # a whole schedule sleeps at most the deadline in total
    spent, n = 0.0, 0
    while (delay := policy.next_delay(n, spent, rng)) is not None:
        spent += delay
        n += 1
    assert spent <= 10
    assert n > 5


@pytest.mark.parametrize(("retry_after", "expected_min"), [(3.0, 3.0), (60.0, 5.0), (0.0, 0.0)])
def test_retry_after_wins_when_longer_but_is_capped(
    retry_after: float, expected_min: float
) -> None:
    policy = RetryPolicy(base_s=0.01, max_s=5.0, deadline_s=100)
    delay = policy.next_delay(0, 0.0, random.Random(3), retry_after)
    assert delay is not None
    assert expected_min <= delay <= max(expected_min, policy.ceiling(0))


def test_retry_after_past_the_deadline_gives_up() -> None:
    policy = RetryPolicy(base_s=0.01, max_s=30.0, deadline_s=10)
    assert policy.next_delay(0, 8.0, random.Random(3), 5.0) is None
