"""Who the token names and the audit trail, mixed into :class:`console.client.ConsoleClient`."""

from __future__ import annotations

from typing import Any

from console.models_operators import AuditEntry, Me


class OperatorCalls:
    """``GET /api/me``, ``GET /api/audit``."""

    async def _get(self, shape: Any, path: str, **kwargs: Any) -> Any:
        raise NotImplementedError  # provided by ConsoleClient

    async def me(self) -> Me:
        """The operator this console acts as and its role."""
        got: Me = await self._get(Me, "/api/me")
        return got

    async def audit(self, limit: int = 200, operator: str | None = None) -> list[AuditEntry]:
        """The first ``limit`` entries of the audit trail, oldest first (one page)."""
        params: dict[str, Any] = {"limit": limit}
        if operator:
            params["operator"] = operator
        got: list[AuditEntry] = await self._get(list[AuditEntry], "/api/audit", params=params)
        return got
