"""Waits that end on their own: a held ``decide()`` action or an offered handoff nobody
decided within ``CADENCIA_EXPIRE`` (per kind, off by default) is denied by ``system`` with
the reason "expired", a recorded decision the agent reads like any other. A refund, a
takeover and a PR never expire: they escalate (:mod:`backend.oncall.notifier`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from backend.exceptions import ConflictError, NotFoundError
from backend.jobs import Job, Jobs

log = logging.getLogger(__name__)

EXPIRE = "oncall.expire"
EXPIRABLE = ("action_approval", "handoff")
"""The inbox kinds that may expire (``CADENCIA_EXPIRE`` refuses any other)."""
SYSTEM = "system"
REASON = "expired"


class Expiries:
    """Denies what waited past its kind's expiry, in a recurring ``oncall.expire`` job.

    Args:
        jobs: the engine the kind is registered on.
        inbox_items: the inbox now (items with ``kind``, ``target_id``, ``age_s``).
        expire: seconds per expirable kind; an empty map schedules nothing.
        reject_approval: denies a held action (``approval_id, operator, reason``).
        decline_handoff: declines an offered handoff (``handoff_id, operator, reason``).
        period_s: how often to look.
    """

    def __init__(
        self,
        jobs: Jobs,
        inbox_items: Callable[[], list[Any]],
        expire: Mapping[str, float],
        reject_approval: Callable[[str, str, str], Any],
        decline_handoff: Callable[[str, str, str], Any],
        *,
        period_s: float,
    ) -> None:
        self.jobs = jobs
        self.inbox_items = inbox_items
        self.expire = dict(expire)
        self.deny = {"action_approval": reject_approval, "handoff": decline_handoff}
        self.period_s = period_s
        jobs.register(EXPIRE, self.run, max_attempts=3)

    def schedule(self) -> None:
        """Start the recurring job when some kind expires."""
        if self.expire:
            self.jobs.every(EXPIRE, self.period_s)

    def run(self, job: Job | None = None) -> list[str]:
        """Deny every item past its kind's expiry; the ids of those denied now."""
        denied = []
        for item in self.inbox_items():
            limit = self.expire.get(item.kind)
            if limit is None or item.age_s < limit:
                continue
            try:
                self.deny[item.kind](item.target_id, SYSTEM, REASON)
            except (ConflictError, NotFoundError):
                continue  # decided by someone meanwhile: nothing to expire
            log.info("expired %s after %.0f s", item.id, item.age_s)
            denied.append(item.id)
        return denied
