"""Load ERP rows (the admin's path: scenarios, the demo, tests, ``cadencia erp seed``;
never a tool).

A seed file is JSONL, one row a line: a cliente (``clienteId``, ``nome``, optional
``endereco``, ``telefone``, ``email``) or a pedido (``pedidoId``, ``clienteId``,
``valorPedido``, optional ``status``), told apart by ``pedidoId``. Every line is validated
before anything is written, and the file loads in one transaction: a bad line, or a pedido
whose cliente is neither in the file nor in the ERP, loads nothing. Loading again updates
the same rows (an order keeps its refund state).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StringConstraints,
    Tag,
    TypeAdapter,
)
from pydantic import ValidationError as PydanticValidationError

from backend.clock import utcnow_iso
from backend.erp.fields import Email, Endereco, EntityId, Telefone
from backend.exceptions import ValidationError
from backend.store.db import Database

MAX_ERRORS_SHOWN = 20
"""A file with more bad lines names the first ones and how many more."""


class ClienteLine(BaseModel):
    """A seed line that is a client of the ERP."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    clienteId: EntityId
    nome: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    endereco: Endereco | None = None
    telefone: Telefone | None = None
    email: Email | None = None


class PedidoLine(BaseModel):
    """A seed line that is an order, and the customer it belongs to."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    pedidoId: EntityId
    clienteId: EntityId
    valorPedido: Annotated[Decimal, Field(gt=0, max_digits=12, decimal_places=2)]
    status: Annotated[str, StringConstraints(pattern=r"^[a-z_]{1,32}$")] = "entregue"


def _kind(line: Any) -> str:
    return "pedido" if isinstance(line, dict) and "pedidoId" in line else "cliente"


SeedLine = Annotated[
    Annotated[PedidoLine, Tag("pedido")] | Annotated[ClienteLine, Tag("cliente")],
    Discriminator(_kind),
]
_LINE: TypeAdapter[PedidoLine | ClienteLine] = TypeAdapter(SeedLine)


@dataclass(frozen=True)
class Seeded:
    """What a seed file loaded."""

    clientes: int
    pedidos: int


def parse_seed(path: Path) -> list[tuple[int, PedidoLine | ClienteLine]]:
    """Every line of seed file ``path`` with its number, validated.

    Raises:
        ValidationError: the file cannot be read, is empty, or has bad lines (each named
            ``FILE:LINE: field: why``).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError(f"cannot read seed file {path}: {exc}") from exc
    rows: list[tuple[int, PedidoLine | ClienteLine]] = []
    errors: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append((number, _LINE.validate_json(line)))
        except PydanticValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"] if p not in ("pedido", "cliente"))
            errors.append(f"{path}:{number}: {where or 'line'}: {first['msg']}")
    if errors:
        more = len(errors) - MAX_ERRORS_SHOWN
        shown = errors[:MAX_ERRORS_SHOWN] + ([f"... and {more} more"] if more > 0 else [])
        raise ValidationError(
            f"{len(errors)} bad line(s), nothing loaded:\n" + "\n".join(shown), path=str(path)
        )
    if not rows:
        raise ValidationError(f"seed file {path} has no lines", path=str(path))
    return rows


def load_seed(db: Database, path: Path) -> Seeded:
    """Load seed file ``path`` into the ERP in one transaction (see the module docstring).

    Raises:
        ValidationError: a bad line, or a pedido whose cliente is nowhere; nothing loaded.
    """
    rows = parse_seed(path)
    clientes = [(n, r) for n, r in rows if isinstance(r, ClienteLine)]
    pedidos = [(n, r) for n, r in rows if isinstance(r, PedidoLine)]
    in_file = {c.clienteId for _, c in clientes}
    now = utcnow_iso()
    with db.transaction() as tx:
        for _, c in clientes:
            tx.execute(
                "erp_seed_cliente",
                {
                    "id": c.clienteId,
                    "nome": c.nome,
                    "endereco": c.endereco,
                    "telefone": c.telefone,
                    "email": c.email,
                },
            )
        for number, p in pedidos:
            if p.clienteId not in in_file and not tx.one(
                "erp_seed_cliente_known", {"id": p.clienteId}
            ):
                raise ValidationError(
                    f"{path}:{number}: clienteId {p.clienteId} is neither a cliente of this "
                    "file nor of the ERP; nothing loaded",
                    path=str(path),
                )
            tx.execute(
                "erp_seed_pedido",
                {
                    "id": p.pedidoId,
                    "cliente_id": p.clienteId,
                    "status": p.status,
                    "valor_pedido": str(p.valorPedido.quantize(Decimal("0.01"))),
                    "criado_em": now,
                },
            )
    return Seeded(len(clientes), len(pedidos))


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
