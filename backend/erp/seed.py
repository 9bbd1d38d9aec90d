"""Upsert ERP rows (admin path: scenarios, the demo and tests; never a tool)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from backend.clock import utcnow_iso
from backend.store.db import Database


def upsert_pedidos(db: Database, pedidos: Iterable[dict[str, Any]]) -> int:
    """Upsert ``{"pedidoId", "valorPedido", "clienteId"?}`` rows (and their clientes)."""
    count = 0
    with db.transaction() as tx:
        for p in pedidos:
            cliente = p.get("clienteId")
            if cliente:
                tx.execute(
                    "erp_upsert_cliente",
                    {
                        "id": cliente,
                        "nome": p.get("nomeCliente") or f"Cliente {cliente}",
                        "endereco": None,
                        "telefone": None,
                        "email": None,
                    },
                )
            tx.execute(
                "erp_upsert_pedido",
                {
                    "id": p["pedidoId"],
                    "cliente_id": cliente,
                    "status": p.get("status", "entregue"),
                    "valor_pedido": str(p["valorPedido"]),
                    "criado_em": utcnow_iso(),
                },
            )
            count += 1
    return count
