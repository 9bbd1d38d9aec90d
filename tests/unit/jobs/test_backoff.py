"""The job engine's backoff: exponential ceiling, full jitter below it, capped."""

from __future__ import annotations

import random

from backend.jobs import Backoff


def test_full_jitter_stays_under_an_exponential_ceiling_and_the_cap() -> None:
    backoff = Backoff(base_s=1.0, max_s=10.0)
    rng = random.Random(7)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (30, 10.0)]:
        delays = [backoff.delay(attempt, rng) for _ in range(200)]
        assert all(0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling / 2  # spread over the range, not pinned to a value
