"""The three tools. Each is built only after the guard allowed the call, with its own
ERP role and, for the refund alone, the gateway and its secret."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from backend.erp.connections import ToolConnection
from backend.exceptions import GatewayError, NotFoundError
from backend.gateway.client import GatewayClient
from backend.tools.exceptions import DebitUnrecordedError, ToolRefusedError
from backend.tools.specs import CadastroArgs, ConsultarArgs, ReembolsoArgs

# One named query per contact column (sql/erp_queries.sql).
_CADASTRO_QUERIES = {
    "endereco": "tool_cadastro_endereco",
    "telefone": "tool_cadastro_telefone",
    "email": "tool_cadastro_email",
}


class ConsultarStatusPedido:
    """Read-only: the order's status and refund state."""

    def __init__(self, erp: ToolConnection) -> None:
        self._erp = erp

    def run(self, args: ConsultarArgs) -> dict[str, Any]:
        with self._erp.transaction(write=False) as tx:
            row = tx.one("tool_consulta_pedido", {"pedido_id": args.pedidoId})
        if row is None:
            raise NotFoundError(f"pedido {args.pedidoId} não encontrado")
        return row


def valor_do_pedido(erp: ToolConnection, pedido_id: str) -> Decimal:
    """The order's value, read as the refund tool's own ERP role."""
    with erp.transaction(write=False) as tx:
        row = tx.one("tool_reembolso_ler", {"pedido_id": pedido_id})
    if row is None:
        raise ToolRefusedError(f"pedido {pedido_id} não encontrado")
    return Decimal(str(row["valor_pedido"]))


class EmitirReembolso:
    """Irreversible: debits the gateway once, then records the refund on the order."""

    def __init__(self, erp: ToolConnection, gateway: GatewayClient) -> None:
        self._erp = erp
        self._gateway = gateway

    def check(self, args: ReembolsoArgs) -> Decimal:
        """Refuse a refund above the order's value or for an unknown order."""
        valor_pedido = valor_do_pedido(self._erp, args.pedidoId)
        if args.valor > valor_pedido:
            raise ToolRefusedError(
                f"valor {args.valor} acima do valor do pedido {valor_pedido}",
                customer=f"o valor pedido é maior que o valor do pedido {args.pedidoId}",
                pedido=args.pedidoId,
            )
        return valor_pedido

    def run(self, args: ReembolsoArgs, idempotency_key: str | None) -> dict[str, Any]:
        self.check(args)
        try:
            debit = self._gateway.refund(args.pedidoId, args.valor, idempotency_key)
        except GatewayError as exc:
            # Nothing was debited, but the fault is ours or the moment's (unreachable, our
            # credentials, 408/429): ``falhou`` (released), answered 502/503 to the caller.
            # A definitive refusal (GatewayRefusedError) and an unknown outcome
            # (GatewayUncertainError) go on as they are.
            if type(exc) is GatewayError:
                raise ToolRefusedError(exc.message) from exc
            raise
        try:
            self.record(args.pedidoId, args.valor)
        except Exception as exc:
            # The money moved: whatever broke (the ERP connection dropped...), this is not a
            # failure, or a retry could take the claim again. Reconcile completes it by key.
            raise DebitUnrecordedError(
                f"gateway debited {debit.get('id', '?')} but recording it failed: "
                f"{type(exc).__name__}",
                pedido=args.pedidoId,
            ) from exc
        return {"reembolso": debit}

    def record(self, pedido_id: str, valor: Decimal) -> None:
        """Write the refund on the order (also used when reconciling)."""
        with self._erp.transaction() as tx:
            tx.execute("tool_reembolso_gravar", {"pedido_id": pedido_id, "valor": str(valor)})

    def reconcile(self, chave: str, pedido_id: str, valor: str | None) -> dict[str, Any] | None:
        """Ask the gateway what it did under ``chave``; write a refund it did on the order.

        Returns the gateway's debit, or None when it never saw the key.
        """
        found = self._gateway.lookup(chave)
        if found is not None and valor is not None:
            self.record(pedido_id, Decimal(valor))
        return found


class AtualizarCadastro:
    """Reversible write: contact columns only."""

    def __init__(self, erp: ToolConnection) -> None:
        self._erp = erp

    def run(self, args: CadastroArgs) -> dict[str, Any]:
        changes = args.changes()
        with self._erp.transaction() as tx:
            # Every statement matches the same row (or none), so any count tells.
            count = 0
            for column, valor in changes.items():
                count = tx.execute(
                    _CADASTRO_QUERIES[column], {"valor": valor, "cliente_id": args.clienteId}
                )
        if count == 0:
            raise ToolRefusedError(f"cliente {args.clienteId} não encontrado")
        return {"atualizado": sorted(changes)}
