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

    async def audit(
        self, tail: int = 200, operator: str | None = None, target: str | None = None
    ) -> list[AuditEntry]:
        """The newest ``tail`` entries of the audit trail (of one operator, on one item),
        oldest first."""
        params: dict[str, Any] = {"tail": tail}
        if operator:
            params["operator"] = operator
        if target:
            params["target"] = target
        got: list[AuditEntry] = await self._get(list[AuditEntry], "/api/audit", params=params)
        return got
