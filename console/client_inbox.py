"""The Inbox's calls of the HTTP API, mixed into :class:`console.client.ConsoleClient`
(kept apart so neither module grows past one screenful of concepts).

An Inbox item names its own routes (``actions[].path``): :meth:`InboxCalls.act` posts to
the one the operator chose and parses the answer as that kind's response model, so the
console never builds an action URL the server did not offer.
"""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import quote

from pydantic import BaseModel

from console.client_decode import parse
from console.exceptions import ApiError
from console.models import PullRequest
from console.models_agents import AgentPause
from console.models_inbox import (
    ApprovalDecisionOut,
    ApprovalOut,
    HandoffOut,
    InboxAction,
    InboxItem,
    JobOut,
)

ActResult = PullRequest | ApprovalDecisionOut | HandoffOut | JobOut | AgentPause
RESULT_SHAPE: dict[str, type[BaseModel]] = {
    "pr": PullRequest,
    "pr_blocked": PullRequest,
    "pr_stuck": PullRequest,
    "action_approval": ApprovalDecisionOut,
    "handoff": HandoffOut,
    "job_dead": JobOut,
    "unanswered": AgentPause,
}
"""What each kind's action routes answer (takeovers and uncertain refunds send bodies of
their own: :mod:`console.operator_actions`)."""


class InboxCalls:
    """The Inbox and the routes its items name: approvals, handoffs."""

    async def _get(self, shape: Any, path: str, **kwargs: Any) -> Any:
        raise NotImplementedError  # provided by ConsoleClient

    async def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        raise NotImplementedError  # provided by ConsoleClient

    async def _get_all(self, shape: Any, path: str, params: dict[str, Any] | None = None) -> Any:
        raise NotImplementedError  # provided by ConsoleClient

    async def inbox(self, project_id: str | None = None) -> list[InboxItem]:
        """Everything waiting for a human, most urgent first (the server's order): every
        page, because the Inbox screen and the header's counts show the whole list."""
        params = {"project_id": project_id} if project_id else None
        result: list[InboxItem] = await self._get_all(list[InboxItem], "/api/inbox", params)
        return result

    async def approval(self, approval_id: str) -> ApprovalOut:
        """One held action: what it would do and why ``decide()`` asked."""
        path = f"/api/approvals/{quote(approval_id, safe='')}"
        result: ApprovalOut = await self._get(ApprovalOut, path)
        return result

    async def handoffs(self, status: str | None = "offered") -> list[HandoffOut]:
        """Handoffs, the offered (pending) ones by default (every page: a detail screen
        looks one up in the list)."""
        params = {"status": status} if status else None
        result: list[HandoffOut] = await self._get_all(list[HandoffOut], "/api/handoffs", params)
        return result

    async def act(
        self, item: InboxItem, action: InboxAction, operator: str, reason: str = ""
    ) -> ActResult:
        """Run one of ``item``'s own actions; the server's answer, parsed, or its error.

        Raises:
            ApiError: a required reason is blank (nothing is sent), or the server refused.
        """
        if action.reason == "required" and not reason.strip():
            raise ApiError(422, "reason_required", f"a reason is required to {action.name}")
        shape = RESULT_SHAPE.get(item.kind)
        if shape is None:
            raise ApiError(422, "not_an_inbox_action", f"{item.kind} has its own keys")
        body: dict[str, Any] = {"operator": operator}
        if reason.strip() and action.reason != "none":
            body["reason"] = reason.strip()
        answer = await self._request(action.method, action.path, json=body)
        return cast("ActResult", parse(shape, answer, f"{action.method} {action.path}"))
