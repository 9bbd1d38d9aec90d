"""Deadlines of the items waiting for a human: how long each inbox kind may wait.

``CADENCIA_SLA`` is a JSON map from an inbox kind to a duration (``"90s"``, ``"5m"``,
``"4h"``, ``"1d"``, or seconds as a number); kinds it leaves out keep :data:`DEFAULT_SLA`.
An item is ``ok`` until 75% of its SLA has passed, ``warning`` until all of it has, then
``breached``: what the inbox sorts by, the console colours and the pages are sent on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

SlaState = Literal["ok", "warning", "breached"]

DEFAULT_SLA: dict[str, float] = {
    "interruption": 120.0,
    "unanswered": 120.0,
    "uncertain": 300.0,
    "pr_stuck": 900.0,
    "job_dead": 900.0,
    "action_approval": 1800.0,
    "handoff": 1800.0,
    "pr": 4 * 3600.0,
    "pr_blocked": 4 * 3600.0,
}
"""Seconds each kind may wait: a customer waiting on a person first, reviews last."""

WARNING_AT = 0.75
"""The share of its SLA after which an item is ``warning``."""

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")


def parse_duration(value: str | float | int) -> float:
    """Seconds in ``"90s"``, ``"5m"``, ``"4h"``, ``"1d"``, ``"250ms"`` or a number of seconds.

    Raises:
        ValueError: anything else, or a negative number.
    """
    if isinstance(value, bool):
        raise ValueError(f"not a duration: {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise ValueError(f"a duration cannot be negative: {value!r}")
        return float(value)
    found = _DURATION.match(value)
    if found is None:
        raise ValueError(f"not a duration: {value!r} (use e.g. 90s, 5m, 4h, 1d)")
    return float(found.group(1)) * _UNITS[found.group(2) or "s"]


@dataclass(frozen=True)
class Deadline:
    """When an item is due and where it stands against its SLA."""

    due_at: datetime
    state: SlaState
    sla_s: float


class Slas:
    """The SLA of each inbox kind: :data:`DEFAULT_SLA` overridden by ``overrides``."""

    def __init__(self, overrides: Mapping[str, float] | None = None) -> None:
        self.seconds = {**DEFAULT_SLA, **(overrides or {})}

    def of(self, kind: str) -> float:
        """The kind's SLA in seconds (a kind nobody named waits as long as a PR)."""
        return self.seconds.get(kind, DEFAULT_SLA["pr"])

    def deadline(self, kind: str, since: datetime, now: datetime) -> Deadline:
        """The deadline of an item of ``kind`` waiting since ``since``, as of ``now``."""
        sla = self.of(kind)
        due = since + timedelta(seconds=sla)
        waited = (now - since).total_seconds()
        if waited >= sla:
            state: SlaState = "breached"
        elif waited >= WARNING_AT * sla:
            state = "warning"
        else:
            state = "ok"
        return Deadline(due, state, sla)
