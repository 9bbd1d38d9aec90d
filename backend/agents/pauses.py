"""The operators' off switch: pause an agent so that it runs no new turn, then resume it.

The state is one row per agent id in ``agent_pauses`` (migration 0012), so every backend
process sharing the database sees it, and it survives a restart. A pause covers the agent
id in every project and stops *new* turns only; :class:`Pauses` says who reads what.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from backend.agents.team import GATE_AGENTS, agent
from backend.events import EventLog, EventType, utcnow_iso
from backend.exceptions import AgentPausedError, ConflictError
from backend.store.db import Row

if TYPE_CHECKING:
    from backend.agents.runtime import TurnContext


@dataclass(frozen=True)
class PauseState:
    """Whether an agent is paused, and the last pause's who, when and why."""

    agent: str
    paused: bool
    paused_by: str | None = None
    paused_at: str | None = None
    reason: str | None = None
    resumed_by: str | None = None
    resumed_at: str | None = None

    @classmethod
    def from_row(cls, row: Row | None, agent_id: str) -> PauseState:
        """Build from an ``agent_pauses`` row (None: never paused)."""
        if row is None:
            return cls(agent_id, False)

        def text(key: str) -> str | None:
            value = row.get(key)
            return None if value is None else str(value)

        return cls(
            agent=str(row["agent"]),
            paused=bool(row["paused"]),
            paused_by=text("paused_by"),
            paused_at=text("paused_at"),
            reason=text("reason"),
            resumed_by=text("resumed_by"),
            resumed_at=text("resumed_at"),
        )

    def to_dict(self) -> dict[str, Any]:
        """The API's shape (``POST /api/agents/{id}/pause|resume``)."""
        return {
            "agent": self.agent,
            "paused": self.paused,
            "paused_by": self.paused_by,
            "paused_at": self.paused_at,
            "reason": self.reason,
            "resumed_by": self.resumed_by,
            "resumed_at": self.resumed_at,
        }


def known_agent(agent_id: str) -> str:
    """``agent_id`` when it names an agent that runs turns.

    Raises:
        NotFoundError: no such agent (404).
        ConflictError: a deterministic gate (qa, secops): it runs scanners, never a turn,
            so a pause would claim an effect it cannot have.
    """
    agent(agent_id)
    if agent_id in GATE_AGENTS:
        raise ConflictError(
            f"{agent_id} is a deterministic gate: it runs scanners, not model turns, and "
            "cannot be paused (close or unblock the PR instead)",
            agent=agent_id,
        )
    return agent_id


class Pauses:
    """Pause and resume agents; the turn check every runtime runs.

    A pause covers the agent id in every project (``dev-api`` paused is paused everywhere).
    Each change appends its ``agent.paused`` / ``agent.resumed`` event in the same
    transaction; the roster reads those events (a projection), turns read the table
    (:meth:`check`).

    A pause stops *new* turns: a turn already running finishes. Every runtime of the backend
    gets :meth:`check` as a turn check (``backend/core.py``); work that runs outside a runtime
    (the rule-based Infra planner, a dev worker) asks :meth:`is_paused`.
    """

    def __init__(self, events: EventLog) -> None:
        self.events = events
        self.db = events.db

    def state(self, agent_id: str) -> PauseState:
        """The agent's pause state (not paused when it was never paused)."""
        with self.db.transaction(write=False) as tx:
            row = tx.one("agent_pause_get", {"agent": agent_id})
        return PauseState.from_row(row, agent_id)

    def is_paused(self, agent_id: str) -> bool:
        """True while an operator has ``agent_id`` paused (one primary-key read)."""
        return self.state(agent_id).paused

    def pause(self, agent_id: str, operator: str, reason: str | None = None) -> PauseState:
        """Pause ``agent_id`` everywhere.

        Raises:
            NotFoundError: unknown agent.
            ConflictError: already paused (by whom, since when), or a gate.
        """
        known_agent(agent_id)
        params = {"agent": agent_id, "operator": operator, "reason": reason, "now": utcnow_iso()}
        with self.db.transaction() as tx:
            if tx.execute("agent_pause", params) == 0:
                was = PauseState.from_row(tx.one("agent_pause_get", {"agent": agent_id}), agent_id)
                raise ConflictError(
                    f"{agent_id} is already paused by {was.paused_by} since {was.paused_at}",
                    agent=agent_id,
                )
            now = PauseState.from_row(tx.one("agent_pause_get", {"agent": agent_id}), agent_id)
            event = self.events.append_in(
                tx,
                EventType.AGENT_PAUSED,
                {"operator": operator, **({"reason": reason} if reason else {})},
                agent=agent_id,
            )
        self.events.publish([event])
        return now

    def resume(self, agent_id: str, operator: str) -> PauseState:
        """Resume a paused agent: its next turn runs again.

        Raises:
            NotFoundError: unknown agent.
            ConflictError: the agent is not paused, or a gate.
        """
        known_agent(agent_id)
        params = {"agent": agent_id, "operator": operator, "now": utcnow_iso()}
        with self.db.transaction() as tx:
            if tx.execute("agent_resume", params) == 0:
                raise ConflictError(f"{agent_id} is not paused", agent=agent_id)
            now = PauseState.from_row(tx.one("agent_pause_get", {"agent": agent_id}), agent_id)
            event = self.events.append_in(
                tx,
                EventType.AGENT_RESUMED,
                {"operator": operator, "paused_by": now.paused_by},
                agent=agent_id,
            )
        self.events.publish([event])
        return now

    def check(self, ctx: TurnContext) -> None:
        """A turn check (``AgentRuntime(checks=...)``): refuse a turn of a paused agent.

        Raises:
            AgentPausedError: the agent is paused (HTTP 409 ``agent_paused``).
        """
        state = self.state(ctx.agent_id)
        if state.paused:
            why = f": {state.reason}" if state.reason else ""
            raise AgentPausedError(
                f"{ctx.agent_id} is paused by {state.paused_by}{why}; "
                f"resume it (POST /api/agents/{ctx.agent_id}/resume) to run turns",
                agent=ctx.agent_id,
                paused_by=state.paused_by,
            )
