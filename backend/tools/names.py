"""The three customer-service tools' names, with nothing else to import.

:mod:`backend.tools.registry` holds every fact about each tool; the IAM model and the
gate's sandboxed IAM check only need the names, without the registry's imports (the
gateway client, the ERP tools) in a child that starts for every PR.
"""

from __future__ import annotations

from typing import Literal

ToolName = Literal["consultar-status-pedido", "emitir-reembolso", "atualizar-cadastro"]

CONSULTAR_STATUS_PEDIDO: ToolName = "consultar-status-pedido"
EMITIR_REEMBOLSO: ToolName = "emitir-reembolso"
ATUALIZAR_CADASTRO: ToolName = "atualizar-cadastro"
TOOL_NAMES: tuple[ToolName, ...] = (CONSULTAR_STATUS_PEDIDO, EMITIR_REEMBOLSO, ATUALIZAR_CADASTRO)
