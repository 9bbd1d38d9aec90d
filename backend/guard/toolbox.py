"""Hands each tool exactly its own credentials, only when the guard lets it run.

The ERP role connections open lazily on first use; the gateway secret is read each time
a tool whose spec names it asks for the gateway, and by nothing else, so a blocked attempt
provably reads none.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from backend.erp.connections import CredentialFn, ToolConnection
from backend.exceptions import SecretError
from backend.gateway.client import GatewayClient
from backend.gateway.client import gateway_identity as gateway_id_of
from backend.secrets.base import SecretStore
from backend.store.db import Database
from backend.tools.registry import TOOLS, ToolCredentials, ToolSpec


@dataclass(frozen=True)
class _Credentials:
    """One tool's credentials (satisfies :class:`~backend.tools.registry.ToolCredentials`)."""

    tool: str
    erp: ToolConnection
    gateway_factory: Callable[[], GatewayClient] | None

    def gateway(self) -> GatewayClient:
        if self.gateway_factory is None:
            raise SecretError(f"tool {self.tool} holds no gateway secret", tool=self.tool)
        return self.gateway_factory()


class Toolbox:
    """Credentials of the registered tools."""

    def __init__(
        self,
        db: Database,
        *,
        credential: CredentialFn | None,
        gateway_url: str,
        secret_store: SecretStore,
        gateway_secret_id: str,
        gateway_timeout_s: float = 5.0,
        gateway_identity: str | None = None,
        gateway_settle_s: float = 300.0,
    ) -> None:
        self._conns = {
            spec.role: ToolConnection(db, spec.role, credential) for spec in TOOLS.values()
        }
        self._gateway_url = gateway_url
        self.gateway_identity = gateway_identity or gateway_id_of(gateway_url)
        """Which gateway the refund asks: recorded on its claims, checked by reconcile."""
        self.gateway_settle_s = gateway_settle_s
        """How long after a request the gateway may still debit it (see
        :class:`~backend.guard.uncertain.UncertainOutcomes`)."""
        self._secrets = secret_store
        self._secret_id = gateway_secret_id
        self._timeout = gateway_timeout_s
        self._gateway: tuple[str, GatewayClient] | None = None
        self._lock = threading.Lock()

    def credentials(self, spec: ToolSpec) -> ToolCredentials:
        """What ``spec``'s runner may use: its own ERP role and, if it names one, its secret."""
        factory = self._gateway_client if spec.secret == "gateway" else None
        return _Credentials(spec.name, self._conns[spec.role], factory)

    def _gateway_client(self) -> GatewayClient:
        """The gateway client, rebuilt when the secret rotated (reads the secret every time)."""
        secret = self._secrets.get(self._secret_id)
        with self._lock:
            if self._gateway is None or self._gateway[0] != secret:
                if self._gateway is not None:
                    self._gateway[1].close()
                client = GatewayClient(
                    self._gateway_url,
                    secret,
                    timeout_s=self._timeout,
                    identity=self.gateway_identity,
                )
                self._gateway = (secret, client)
            return self._gateway[1]

    def close(self) -> None:
        """Close connections and the gateway client."""
        for conn in self._conns.values():
            conn.close()
        with self._lock:
            if self._gateway is not None:
                self._gateway[1].close()
                self._gateway = None
