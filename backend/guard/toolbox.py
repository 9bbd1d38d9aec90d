"""Builds each tool with exactly its own credentials, only when the guard asks for it.

The ERP role connections open lazily on first use; the gateway secret is read each time
a refund tool is built, and by nothing else, so a blocked attempt provably reads none.
"""

from __future__ import annotations

import threading

from backend.erp.connections import CredentialFn, ToolConnection
from backend.erp.grants import ROLE_CADASTRO, ROLE_CONSULTA, ROLE_REEMBOLSO
from backend.gateway.client import GatewayClient
from backend.secrets.base import SecretStore
from backend.store.db import Database
from backend.tools.erp_tools import AtualizarCadastro, ConsultarStatusPedido, EmitirReembolso


class Toolbox:
    """Factory of the three tools."""

    def __init__(
        self,
        db: Database,
        *,
        credential: CredentialFn | None,
        gateway_url: str,
        secret_store: SecretStore,
        gateway_secret_id: str,
        gateway_timeout_s: float = 5.0,
    ) -> None:
        self._conns = {
            role: ToolConnection(db, role, credential)
            for role in (ROLE_CONSULTA, ROLE_REEMBOLSO, ROLE_CADASTRO)
        }
        self._gateway_url = gateway_url
        self._secrets = secret_store
        self._secret_id = gateway_secret_id
        self._timeout = gateway_timeout_s
        self._gateway: tuple[str, GatewayClient] | None = None
        self._lock = threading.Lock()

    def consulta(self) -> ConsultarStatusPedido:
        """The read-only tool, as ``cadencia_agente_consulta``."""
        return ConsultarStatusPedido(self._conns[ROLE_CONSULTA])

    def cadastro(self) -> AtualizarCadastro:
        """The contact-update tool, as ``cadencia_agente_cadastro``."""
        return AtualizarCadastro(self._conns[ROLE_CADASTRO])

    def reembolso(self) -> EmitirReembolso:
        """The refund tool: ``cadencia_agente_reembolso`` plus the gateway secret."""
        secret = self._secrets.get(self._secret_id)
        with self._lock:
            if self._gateway is None or self._gateway[0] != secret:
                if self._gateway is not None:
                    self._gateway[1].close()
                self._gateway = (
                    secret,
                    GatewayClient(self._gateway_url, secret, timeout_s=self._timeout),
                )
            client = self._gateway[1]
        return EmitirReembolso(self._conns[ROLE_REEMBOLSO], client)

    def close(self) -> None:
        """Close connections and the gateway client."""
        for conn in self._conns.values():
            conn.close()
        with self._lock:
            if self._gateway is not None:
                self._gateway[1].close()
                self._gateway = None
