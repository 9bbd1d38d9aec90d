"""The payment gateway client (httpx). The refund tool is its only user.

Each answer maps to the one state it proves (see :meth:`GatewayClient.refund`): a debit,
a definitive refusal (:class:`GatewayRefusedError`, nothing debited), a failure of ours or
a transient one before anything was debited (:class:`GatewayError`), or an unknown outcome
(:class:`GatewayUncertainError`). ``identity`` names the gateway a claim went to, so a
reconcile never asks another one.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from backend.exceptions import GatewayError, GatewayUncertainError
from backend.gateway.exceptions import GatewayRefusedError

NOT_A_VERDICT = frozenset({401, 403, 404, 405, 407, 408, 429})
"""4xx answers that are no verdict on the refund: our credentials or URL are wrong
(401/403/404/405/407), or the gateway did not take the request now (408/429). Each
certainly debited nothing, but it is ours (or the moment's) to fix, not the customer's."""
_REASON_KEYS = ("reason", "motivo", "erro", "error", "message", "mensagem")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")
_REASON_MAX = 200


def gateway_identity(url: str) -> str:
    """The gateway ``url`` names, without credentials, query or fragment (a stable id)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme.lower(), netloc.lower(), parts.path.rstrip("/"), "", ""))


def refusal_reason(response: httpx.Response) -> str:
    """The gateway's reason for a refusal, one printable line of at most 200 characters."""
    reason: Any = None
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        reason = next((body[k] for k in _REASON_KEYS if isinstance(body.get(k), str)), None)
    text = " ".join(_CONTROL.sub(" ", str(reason or response.text or "")).split())
    if not text:
        text = response.reason_phrase or f"HTTP {response.status_code}"
    return text if len(text) <= _REASON_MAX else text[: _REASON_MAX - 1] + "…"


class GatewayClient:
    """Talks to the gateway at ``base_url`` with the secret it was built with."""

    def __init__(
        self, base_url: str, secret: str, *, timeout_s: float = 5.0, identity: str | None = None
    ) -> None:
        self.identity = identity or gateway_identity(base_url)
        """Which gateway this is (recorded on each claim it is asked to debit)."""
        self._http = httpx.Client(
            base_url=base_url,
            timeout=timeout_s,
            headers={"Authorization": f"Bearer {secret}"},
        )

    def refund(self, pedido_id: str, valor: Decimal, idempotency_key: str | None) -> dict[str, Any]:
        """Debit a refund; the gateway's answer (2xx) is returned.

        Raises:
            GatewayRefusedError: a 4xx verdict on the refund (402, 409, 422...): nothing
                was debited, and the gateway's reason says why.
            GatewayError: nothing was debited, but the fault is ours or the moment's: the
                gateway could not be reached, or answered one of :data:`NOT_A_VERDICT`.
            GatewayUncertainError: the request may have reached the gateway and its answer
                is lost or unknown (timeout, dropped connection, 5xx, a 2xx that is not
                JSON): the debit may have happened, so it must not be retried blindly.
        """
        headers = {"Idempotency-Key": idempotency_key} if idempotency_key else {}
        try:
            response = self._http.post(
                "/v1/reembolsos",
                json={"pedidoId": pedido_id, "valor": str(valor)},
                headers=headers,
            )
        except httpx.ConnectError as exc:
            raise GatewayError(f"gateway unreachable: {exc}") from exc
        except httpx.HTTPError as exc:
            raise GatewayUncertainError(f"gateway outcome unknown: {exc!r}") from exc
        if response.status_code >= 500:
            raise GatewayUncertainError(f"gateway answered {response.status_code}")
        if response.status_code in NOT_A_VERDICT:
            raise GatewayError(
                f"gateway answered {response.status_code} ({refusal_reason(response)}); "
                "nothing was debited",
                status=response.status_code,
            )
        if response.status_code >= 400:
            raise GatewayRefusedError(refusal_reason(response), status=response.status_code)
        try:
            data: dict[str, Any] = response.json()
        except ValueError as exc:  # it answered 2xx, so the debit may well have happened
            raise GatewayUncertainError("gateway answered a body that is not JSON") from exc
        return data

    def lookup(self, idempotency_key: str) -> dict[str, Any] | None:
        """What the gateway did under ``idempotency_key``, or None if nothing."""
        try:
            response = self._http.get("/v1/reembolsos", params={"idempotency_key": idempotency_key})
        except httpx.HTTPError as exc:
            raise GatewayError(f"gateway lookup failed: {exc!r}") from exc
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise GatewayError(f"gateway lookup answered {response.status_code}")
        try:
            found: dict[str, Any] = response.json()
        except ValueError as exc:
            raise GatewayError("gateway lookup answered a body that is not JSON") from exc
        return found

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()
