"""The agent routes of the HTTP API (pause, resume, recent turns), mixed into
:class:`console.client.ConsoleClient`."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from console.client_decode import parse
from console.models_agents import AgentPause, AgentTurn


class AgentCalls:
    """The off switch and turn inspection."""

    async def _get(self, shape: Any, path: str, **kwargs: Any) -> Any:
        raise NotImplementedError  # provided by ConsoleClient

    async def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        raise NotImplementedError  # provided by ConsoleClient

    async def pause_agent(self, agent_id: str, operator: str, reason: str = "") -> AgentPause:
        """Pause ``agent_id`` in every project (409 when it already is)."""
        body: dict[str, Any] = {"operator": operator}
        if reason.strip():
            body["reason"] = reason.strip()
        return await self._agent_action(agent_id, "pause", body)

    async def resume_agent(self, agent_id: str, operator: str) -> AgentPause:
        """Resume a paused agent (409 when it is not paused)."""
        return await self._agent_action(agent_id, "resume", {"operator": operator})

    async def agent_turns(self, agent_id: str, limit: int = 20) -> list[AgentTurn]:
        """The agent's newest turns, newest first."""
        path = f"/api/agents/{quote(agent_id, safe='')}/turns"
        result: list[AgentTurn] = await self._get(list[AgentTurn], path, params={"limit": limit})
        return result

    async def _agent_action(self, agent_id: str, verb: str, body: dict[str, Any]) -> AgentPause:
        path = f"/api/agents/{quote(agent_id, safe='')}/{verb}"
        answer = await self._request("POST", path, json=body)
        result: AgentPause = parse(AgentPause, answer, f"POST {path}")
        return result
