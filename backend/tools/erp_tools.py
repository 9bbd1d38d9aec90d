"""The three tools. Each is built only after the guard allowed the call, with its own
ERP role and, for the refund alone, the gateway and its secret."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from backend.erp.connections import ToolConnection
from backend.exceptions import CadenciaError, GatewayError, NotFoundError
from backend.gateway.client import GatewayClient
from backend.tools.specs import CadastroArgs, ConsultarArgs, ReembolsoArgs

_CADASTRO_COLUMNS = ("endereco", "telefone", "email")


class ToolRefusedError(CadenciaError):
    """The tool ran and certainly did nothing irreversible (bad order, amount too high...)."""

    code = "tool_refused"


class ConsultarStatusPedido:
    """Read-only: the order's status and refund state."""

    def __init__(self, erp: ToolConnection) -> None:
        self._erp = erp

    def run(self, args: ConsultarArgs) -> dict[str, Any]:
        with self._erp.transaction() as tx:
            row = tx.one("tool_consulta_pedido", {"pedido_id": args.pedidoId})
        if row is None:
            raise NotFoundError(f"pedido {args.pedidoId} não encontrado")
        return row


class EmitirReembolso:
    """Irreversible: debits the gateway once, then records the refund on the order."""

    def __init__(self, erp: ToolConnection, gateway: GatewayClient) -> None:
        self._erp = erp
        self._gateway = gateway

    def check(self, args: ReembolsoArgs) -> Decimal:
        """Refuse a refund above the order's value or for an unknown order."""
        with self._erp.transaction() as tx:
            row = tx.one("tool_reembolso_ler", {"pedido_id": args.pedidoId})
        if row is None:
            raise ToolRefusedError(f"pedido {args.pedidoId} não encontrado")
        valor_pedido = Decimal(str(row["valor_pedido"]))
        if args.valor > valor_pedido:
            raise ToolRefusedError(
                f"valor {args.valor} acima do valor do pedido {valor_pedido}",
                pedido=args.pedidoId,
            )
        return valor_pedido

    def run(self, args: ReembolsoArgs, idempotency_key: str | None) -> dict[str, Any]:
        self.check(args)
        try:
            debit = self._gateway.refund(args.pedidoId, args.valor, idempotency_key)
        except GatewayError as exc:
            if type(exc) is GatewayError:  # definitive refusal: nothing was debited
                raise ToolRefusedError(exc.message) from exc
            raise
        self.record(args.pedidoId, args.valor)
        return {"reembolso": debit}

    def record(self, pedido_id: str, valor: Decimal) -> None:
        """Write the refund on the order (also used when reconciling)."""
        with self._erp.transaction() as tx:
            tx.execute("tool_reembolso_gravar", {"pedido_id": pedido_id, "valor": str(valor)})


class AtualizarCadastro:
    """Reversible write: contact columns only."""

    def __init__(self, erp: ToolConnection) -> None:
        self._erp = erp

    def run(self, args: CadastroArgs) -> dict[str, Any]:
        changes = args.changes()
        # Column names come from a fixed allow-list, never from input.
        sets = ", ".join(f"{c} = %({c})s" for c in _CADASTRO_COLUMNS if c in changes)
        sql = f"UPDATE clientes SET {sets} WHERE id = %(cliente_id)s"
        with self._erp.transaction() as tx:
            if tx.dialect == "sqlite":
                sql = sql.replace("%(", ":").replace(")s", "")
            count = tx.execute_sql(sql, {**changes, "cliente_id": args.clienteId})
        if count == 0:
            raise ToolRefusedError(f"cliente {args.clienteId} não encontrado")
        return {"atualizado": sorted(changes)}
