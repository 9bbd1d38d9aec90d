"""``cadencia prove``: replay malformed reasoning against a design and count REAL debits.

Each scenario line is one conversation whose model insists on the same tool. The figures
in the summary come from the gateway's journal, never from what the guard believes.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic import ValidationError as PydanticValidationError

from backend.erp.seed import upsert_pedidos
from backend.exceptions import ValidationError
from backend.guard.assembly import Guard, build_guard
from backend.guard.orchestrator import Architecture
from backend.settings import Settings, load_settings
from backend.tools.registry import find_tool


class Chamada(BaseModel):
    """One tool call the (malformed) reasoning makes."""

    model_config = ConfigDict(extra="forbid")
    ferramenta: str
    argumentos: Any = None


class Turno(BaseModel):
    """One customer message and the calls the agent made for it."""

    model_config = ConfigDict(extra="forbid")
    cliente: str
    chamadas: list[Chamada] = Field(default_factory=list, max_length=100)


class PedidoDoCenario(BaseModel):
    """An order the scenario needs in the ERP, and the customer it belongs to."""

    model_config = ConfigDict(extra="allow")
    pedidoId: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
    valorPedido: str = Field(pattern=r"^\d{1,10}(\.\d{1,2})?$")
    clienteId: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


class Conversa(BaseModel):
    """One scenario line: one customer's conversation (its pedidos' clienteId)."""

    model_config = ConfigDict(extra="forbid")
    conversaId: str = Field(min_length=1, max_length=128)
    pedidos: list[PedidoDoCenario] = Field(default_factory=list)
    turnos: list[Turno]

    @model_validator(mode="after")
    def _one_customer(self) -> Conversa:
        if len({p.clienteId for p in self.pedidos}) > 1:
            raise ValueError("a conversation belongs to one customer: its pedidos name several")
        return self

    @property
    def clienteId(self) -> str | None:
        """The customer whose conversation this is (None for a line without pedidos)."""
        return self.pedidos[0].clienteId if self.pedidos else None


def load_scenario(path: Path) -> list[Conversa]:
    """Parse a JSONL scenario; :class:`ValidationError` names the bad line."""
    conversas: list[Conversa] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ValidationError(f"cannot read scenario {path}: {exc.strerror}") from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            conversas.append(Conversa.model_validate_json(line))
        except PydanticValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"])) or "line"
            raise ValidationError(f"{path}:{number}: {where}: {first['msg']}") from exc
    if not conversas:
        raise ValidationError(f"scenario {path} has no conversations")
    return conversas


@dataclass
class ProveResult:
    """Attempt records and the summary of one run."""

    records: list[dict[str, Any]]
    summary: dict[str, Any]


Replay = Callable[[Guard, Conversa], list[dict[str, Any]]]
"""Plays one conversation against a guard; returns its attempt records in order."""


def replay_scripted(guard: Guard, conversa: Conversa) -> list[dict[str, Any]]:
    """The scenario's own calls, straight into the orchestrator (no model at all)."""
    records: list[dict[str, Any]] = []
    for turno in conversa.turnos:
        guard.conversations.append(
            conversa.conversaId, "cliente", turno.cliente, cliente_id=conversa.clienteId
        )
        for chamada in turno.chamadas:
            attempt = guard.orchestrator.call(
                conversa.conversaId, chamada.ferramenta, chamada.argumentos
            )
            records.append(attempt.record)
            guard.conversations.append(conversa.conversaId, "agente", attempt.mensagem)
    return records


def prove(
    conversas: Iterable[Conversa],
    architecture: Architecture,
    *,
    settings: Settings | None = None,
    progress: Callable[[int, int], None] | None = None,
    replay: Replay = replay_scripted,
) -> ProveResult:
    """Replay ``conversas`` against ``architecture`` on a fresh store (unless ``settings``
    name a database/ledger) with a local gateway simulator, and measure.

    ``replay`` plays each conversation: by default the scenario's scripted calls; ``cadencia
    prove --model`` passes one that sends the customer's messages to a model-backed
    ``atendimento`` (:mod:`backend.agents.prove_model`).
    """
    conversas = list(conversas)
    with tempfile.TemporaryDirectory(prefix="cadencia-prove-") as tmp:
        if settings is None:
            settings = load_settings(data_dir=Path(tmp))
        settings = settings.model_copy(update={"gateway_url": None})
        if not settings.database_url:
            settings = settings.model_copy(
                update={
                    "database_url": f"sqlite:///{Path(tmp) / 'prove.sqlite3'}",
                    "data_dir": Path(tmp),
                }
            )
        guard = build_guard(settings, architecture=architecture)
        try:
            upsert_pedidos(guard.db, (p.model_dump() for c in conversas for p in c.pedidos))
            assert guard.simulator is not None
            # A persistent data dir keeps the simulator's journal: count only this run's debits.
            debits_before = len(guard.simulator.debits())
            records: list[dict[str, Any]] = []
            for index, conversa in enumerate(conversas, 1):
                records.extend(replay(guard, conversa))
                if progress:
                    progress(index, len(conversas))
            debits = guard.simulator.debits()[debits_before:]
        finally:
            guard.close()
    return ProveResult(records, summarize(architecture, conversas, records, debits))


def summarize(
    architecture: str, conversas: list[Conversa], records: list[dict[str, Any]], debits: list[Any]
) -> dict[str, Any]:
    """The ``--resumo`` keys (``cadencia prove --help``) from records and the gateway journal."""
    debited_pedidos = {d.pedido_id for d in debits}
    teto_convs = {r["conversaId"] for r in records if r["resultado"] == "bloqueado_por_teto"}
    return {
        "architecture": architecture,
        "conversations": len(conversas),
        "refund_calls": sum(1 for r in records if _is_refund(r["ferramenta"])),
        "gateway_debits": len(debits),
        "duplicate_debits": len(debits) - len(debited_pedidos),
        "interrupted_by_ceiling": len(teto_convs),
        "blocked_by_idempotency": sum(
            1 for r in records if r["resultado"] == "bloqueado_por_idempotencia"
        ),
        "invalid_arguments": sum(1 for r in records if r["resultado"] == "argumentos_invalidos"),
    }


def _is_refund(ferramenta: str) -> bool:
    """Whether ``ferramenta`` is the tool that moves money (the one ``prove`` is about)."""
    spec = find_tool(ferramenta)
    return spec is not None and spec.kind == "irreversible"


def write_json(path: Path, value: Any) -> None:
    """Write JSON atomically (a crash never leaves half a file)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(value, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
