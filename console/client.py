"""The console's only road to the backend: an async HTTP client over httpx + httpx-sse.

No Textual here (STYLE rule 1): screens call these coroutines from workers and get typed
models back, or an :mod:`console.exceptions` error carrying an operator-readable message.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import AsyncGenerator, Callable
from decimal import Decimal
from typing import Any, Literal, TypeVar
from urllib.parse import quote, urlsplit

import httpx
from httpx_sse import SSEError

# The public aiter_sse() swallows ':' heartbeat comments; reading lines ourselves through
# the same decoders lets the console tell "quiet but alive" from "stale".
from httpx_sse._decoders import SSEDecoder, SSELineDecoder

from console.client_agents import AgentCalls
from console.client_decode import error_from, parse, read_json, stream_item
from console.client_inbox import InboxCalls
from console.client_operators import OperatorCalls
from console.exceptions import ApiError, BackendUnavailableError
from console.models import (
    ActivityLine,
    Approvals,
    Connected,
    Conversation,
    Event,
    Findings,
    Health,
    Interruption,
    InterruptionDetail,
    Message,
    PrFiles,
    PullRequest,
    PullRequestDetail,
    ResolveResult,
    Resync,
    RosterEntry,
    StreamEvent,
    StreamItem,
    UncertainOut,
)

STREAM_READ_TIMEOUT_S = 45.0
"""Heartbeats come every 15 s; three missed means the stream is dead, reconnect."""
PAGE_LIMIT = 1000
"""Items per page when the console walks a whole list (the API's maximum)."""
MAX_PAGES = 100
"""A list longer than this many pages is cut there: the console must stay responsive."""

_T = TypeVar("_T")
ResolveAction = Literal["execute", "deny", "hand_back"]


def tls_context(base_url: str) -> ssl.SSLContext | bool:
    """How the client verifies TLS for a backend at ``base_url``.

    Loading the CA bundle (what ``verify=True`` does) costs tens of milliseconds before the
    console's first frame, and a plain-http backend (the loopback default) never uses it.
    Such a backend gets a client context with no trust roots instead: verification stays
    on, so a request that somehow reached an https URL would fail closed, not go unchecked.
    """
    if urlsplit(base_url).scheme == "https":
        return True
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


class ConsoleClient(InboxCalls, AgentCalls, OperatorCalls):
    """Typed async calls of the HTTP API.

    Args:
        base_url: Backend root, e.g. ``http://127.0.0.1:8765``.
        token: Bearer token, or None when the backend runs without auth.
        timeout: Per-request timeout (seconds) for ordinary calls.
        transport: Injected transport (tests); default is a real network transport.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = 10.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=timeout,
            transport=transport,
            verify=tls_context(self.base_url),
        )
        self.last_line_at: float = 0.0
        """``time.monotonic()`` of the last byte line read from the stream (heartbeats too)."""

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    # -- reads -------------------------------------------------------------------------

    async def health(self) -> Health:
        """``GET /healthz``."""
        return await self._get(Health, "/healthz")

    async def roster(self) -> list[RosterEntry]:
        """The team as it stands now."""
        return await self._get(list[RosterEntry], "/api/roster")

    async def events(self, after: int = 0, limit: int = 500) -> list[Event]:
        """Events with id > ``after``, oldest first."""
        params = {"after": after, "limit": limit}
        return await self._get(list[Event], "/api/events", params=params)

    async def activity(self, after: int = 0, limit: int = 500) -> list[ActivityLine]:
        """Server-rendered feed lines with id > ``after``."""
        params = {"after": after, "limit": limit}
        return await self._get(list[ActivityLine], "/api/activity", params=params)

    async def activity_tail(self, lines: int = 200) -> list[ActivityLine]:
        """The newest ``lines`` feed lines, oldest first: one bounded read (the feed's start)."""
        return await self._get(list[ActivityLine], "/api/activity", params={"tail": lines})

    async def approvals(self) -> Approvals:
        """Open infra PRs and unresolved interruptions."""
        return await self._get(Approvals, "/api/approvals")

    async def pull_request(self, pr_id: str) -> PullRequestDetail:
        """One infra PR with its gate timeline."""
        return await self._get(PullRequestDetail, f"/api/prs/{pr_id}")

    async def pr_files(self, pr_id: str) -> PrFiles:
        """The PR branch's files and its unified diff against main."""
        return await self._get(PrFiles, f"/api/prs/{pr_id}/files")

    async def pr_findings(self, pr_id: str) -> Findings:
        """The gates' findings on the PR."""
        return await self._get(Findings, f"/api/prs/{pr_id}/findings")

    async def interruption(self, interruption_id: int) -> InterruptionDetail:
        """One interruption with transcript and attempt history."""
        return await self._get(InterruptionDetail, f"/api/interruptions/{interruption_id}")

    async def conversation(self, conversa_id: str) -> Conversation:
        """A conversation: who holds it, every message and its delivery state."""
        return await self._get(Conversation, f"/api/conversations/{quote(conversa_id, safe='')}")

    # -- operator actions --------------------------------------------------------------

    async def approve(self, pr_id: str, operator: str, reason: str = "") -> PullRequest:
        """Approve (merge) a PR awaiting a human; :class:`ConflictError` otherwise."""
        return await self._pr_action(pr_id, "approve", operator, reason)

    async def reject(self, pr_id: str, operator: str, reason: str) -> PullRequest:
        """Send the PR back with a reason (required, non-empty)."""
        if not reason.strip():
            raise ApiError(422, "reason_required", "a reason is required to reject")
        return await self._pr_action(pr_id, "reject", operator, reason)

    async def close_pr(self, pr_id: str, operator: str, reason: str = "") -> PullRequest:
        """Close a PR without merging."""
        return await self._pr_action(pr_id, "close", operator, reason)

    async def unblock(self, pr_id: str, operator: str, reason: str = "") -> PullRequest:
        """Unblock a PR stuck at the correction limit."""
        return await self._pr_action(pr_id, "unblock", operator, reason)

    async def rerun(self, pr_id: str, operator: str) -> PullRequest:
        """Re-queue the gates of a PR stuck in ``awaiting_qa``/``awaiting_secops``."""
        return await self._pr_action(pr_id, "rerun", operator, "")

    async def claim(self, interruption_id: int, operator: str) -> Interruption:
        """Take over an interruption; :class:`ConflictError` if someone already did."""
        path = f"/api/interruptions/{interruption_id}/claim"
        body = await self._request("POST", path, json={"operator": operator})
        return parse(Interruption, body, f"POST {path}")

    async def release(self, interruption_id: int, operator: str, reason: str = "") -> Interruption:
        """Give a claimed takeover back to the queue (its holder only; the reason is
        optional and audited): it is open again, the conversation back with the bot."""
        path = f"/api/interruptions/{interruption_id}/release"
        body: dict[str, str] = {"operator": operator}
        if reason.strip():
            body["reason"] = reason.strip()
        answer = await self._request("POST", path, json=body)
        return parse(Interruption, answer, f"POST {path}")

    async def reply(self, interruption_id: int, operator: str, text: str) -> Message:
        """Send the customer a message from the operator (any number of times while claimed)."""
        path = f"/api/interruptions/{interruption_id}/reply"
        body = await self._request("POST", path, json={"operator": operator, "text": text})
        return parse(Message, body, f"POST {path}")

    async def resolve(
        self,
        interruption_id: int,
        operator: str,
        action: ResolveAction,
        reply: str = "",
        *,
        valor: Decimal | None = None,
        reason: str = "",
    ) -> ResolveResult:
        """Execute (optionally with a corrected ``valor`` and its reason), deny or hand back.

        Raises:
            BlockedByLedgerError: the ledger refused the execute; the takeover stays open.
        """
        if valor is not None and not reason.strip():
            raise ApiError(422, "reason_required", "a reason is required to change the valor")
        payload: dict[str, Any] = {"operator": operator, "action": action}
        if reply:
            payload["reply"] = reply
        if valor is not None:
            payload["valor"] = str(valor)
        if reason:
            payload["reason"] = reason
        path = f"/api/interruptions/{interruption_id}/resolve"
        body = await self._request("POST", path, json=payload)
        return parse(ResolveResult, body, f"POST {path}")

    async def grant(
        self, interruption_id: int, operator: str, attempts: int, reason: str
    ) -> Interruption:
        """Give the agent ``attempts`` more tries on the takeover's combination (audited)."""
        if not reason.strip():
            raise ApiError(422, "reason_required", "a reason is required to grant attempts")
        path = f"/api/interruptions/{interruption_id}/grant"
        payload = {"operator": operator, "attempts": attempts, "reason": reason}
        body = await self._request("POST", path, json=payload)
        return parse(Interruption, body, f"POST {path}")

    async def reconcile(self, uncertain_id: str, operator: str) -> UncertainOut:
        """Ask the gateway what happened to an uncertain attempt (by its idempotency key)."""
        path = f"/api/uncertain/{quote(uncertain_id, safe='')}/reconcile"
        body = await self._request("POST", path, json={"operator": operator})
        return parse(UncertainOut, body, f"POST {path}")

    async def settle(
        self,
        uncertain_id: str,
        operator: str,
        outcome: Literal["executado", "falhou"],
        reason: str,
    ) -> UncertainOut:
        """Settle an uncertain attempt by hand; the reason is required."""
        if not reason.strip():
            raise ApiError(422, "reason_required", "a reason is required to settle by hand")
        path = f"/api/uncertain/{quote(uncertain_id, safe='')}/settle"
        payload = {"operator": operator, "outcome": outcome, "reason": reason}
        body = await self._request("POST", path, json=payload)
        return parse(UncertainOut, body, f"POST {path}")

    # -- live stream -------------------------------------------------------------------

    async def stream_events(
        self, last_event_id: int | None = None, *, clock: Callable[[], float] = time.monotonic
    ) -> AsyncGenerator[StreamItem, None]:
        """Follow ``/api/events/stream``; yield :class:`Connected`, then events.

        A ``resync`` message is yielded as :class:`Resync` and ends the iteration: the
        caller refetches its snapshots and reconnects after ``last_id``. Any transport
        failure becomes :class:`BackendUnavailableError`; the iterator never retries on
        its own, so the caller owns the backoff policy.
        """
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        timeout = httpx.Timeout(10.0, read=STREAM_READ_TIMEOUT_S)
        try:
            async with self._http.stream(
                "GET", "/api/events/stream", headers=headers, timeout=timeout
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise error_from(response)
                self.last_line_at = clock()
                yield Connected(resumed_from=last_event_id)
                lines, decoder = SSELineDecoder(), SSEDecoder()
                async for chunk in response.aiter_text():
                    self.last_line_at = clock()
                    for line in lines.decode(chunk):
                        sse = decoder.decode(line)
                        if sse is None:
                            continue
                        if sse.event == "resync":
                            resync = stream_item(Resync, sse)
                            yield resync
                            if isinstance(resync, Resync):
                                return
                        elif sse.event in ("", "event", "message") and sse.data:
                            yield stream_item(StreamEvent, sse)
        except (httpx.TransportError, SSEError) as exc:
            raise BackendUnavailableError(f"event stream: {exc or type(exc).__name__}") from exc
        raise BackendUnavailableError("event stream ended")

    # -- plumbing ----------------------------------------------------------------------

    async def _pr_action(self, pr_id: str, verb: str, operator: str, reason: str) -> PullRequest:
        payload: dict[str, Any] = {"operator": operator}
        if reason:
            payload["reason"] = reason
        path = f"/api/prs/{pr_id}/{verb}"
        body = await self._request("POST", path, json=payload)
        return parse(PullRequest, body, f"POST {path}")

    async def _get(self, shape: type[_T], path: str, **kwargs: Any) -> _T:
        return parse(shape, await self._request("GET", path, **kwargs), f"GET {path}")

    async def _get_all(
        self, shape: type[list[_T]], path: str, params: dict[str, Any] | None = None
    ) -> list[_T]:
        """Every page of a paginated list route, following ``X-Next-Cursor`` (for a list
        the console must hold whole, such as the Inbox), at most ``MAX_PAGES`` pages."""
        items: list[_T] = []
        query = dict(params or {}, limit=PAGE_LIMIT)
        for _ in range(MAX_PAGES):
            response = await self._send("GET", path, params=query)
            items += parse(shape, read_json(response, f"GET {path}"), f"GET {path}")
            cursor = response.headers.get("X-Next-Cursor")
            if not cursor:
                break
            query = {**query, "cursor": cursor}
        return items

    async def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        return read_json(await self._send(method, path, **kwargs), f"{method} {path}")

    async def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = await self._http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise BackendUnavailableError(f"{method} {path}: {exc or type(exc).__name__}") from exc
        if response.status_code >= 400:
            raise error_from(response)
        return response
