"""The payment gateway client (httpx). The refund tool is its only user."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx

from backend.exceptions import GatewayError, GatewayUncertainError


class GatewayClient:
    """Talks to the gateway at ``base_url`` with the secret it was built with."""

    def __init__(self, base_url: str, secret: str, *, timeout_s: float = 5.0) -> None:
        self._http = httpx.Client(
            base_url=base_url,
            timeout=timeout_s,
            headers={"Authorization": f"Bearer {secret}"},
        )

    def refund(self, pedido_id: str, valor: Decimal, idempotency_key: str | None) -> dict[str, Any]:
        """Debit a refund. Raises :class:`GatewayUncertainError` when the outcome is unknown.

        A request that may have reached the gateway (timeout, dropped connection, 5xx) is
        uncertain: the debit may have happened, so it must not be retried blindly.
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
        if response.status_code >= 400:
            raise GatewayError(
                f"gateway refused the refund ({response.status_code}): {response.text[:200]}"
            )
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
