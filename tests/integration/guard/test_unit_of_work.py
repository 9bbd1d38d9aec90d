"""The unit of work: ledger decision, takeover and event commit together, or not at all.

On real SQLite and PostgreSQL; the DynamoDB ledger's own path is covered by the ledger
contract test (it never joins a unit of work).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.events import Event, EventLog, EventType
from backend.guard.interruptions import Interruptions
from backend.ledger.base import ClaimRequest, counter_key, payload_hash
from backend.ledger.sql import SqlLedger
from backend.store.db import Database, open_database
from backend.store.migrate import migrate
from backend.store.uow import UnitOfWork

# Any real event type does: the log refuses a free string.
TICK = EventType.BENCH_TICK

COUNTER = counter_key("conv-1", "4821", "emitir-reembolso")
CLAIM = ClaimRequest(
    chave="reembolso#4821",
    ferramenta="emitir-reembolso",
    conversa_id="conv-1",
    entidade_id="4821",
    payload_hash=payload_hash({"pedidoId": "4821", "valor": "129.90"}),
    valor="129.90",
)


class Boom(Exception):
    pass


def _heard(events: EventLog) -> list[Event]:
    heard: list[Event] = []
    events.add_listener(heard.append)
    return heard


def test_everything_in_one_unit_commits_together_and_is_heard_after_commit(
    any_db: Database,
) -> None:
    events, ledger = EventLog(any_db), SqlLedger(any_db)
    interruptions = Interruptions(events)
    heard = _heard(events)
    with UnitOfWork(any_db).begin() as tx:
        reservation = ledger.reserve(COUNTER, CLAIM, tx=tx)
        ident, created = interruptions.open(
            conversa_id="conv-1",
            entidade_id="4821",
            ferramenta="emitir-reembolso",
            motivo="conflito_de_valor",
            argumentos={"pedidoId": "4821"},
            attempts=reservation.tentativa,
            tx=tx,
        )
        events.append(TICK, {"i": 1, "t": 0.0}, session_id="conv-1", tx=tx)
        assert heard == []  # nothing is broadcast before the commit
    assert (reservation.claim, created) == ("claimed", True)
    assert [e.type for e in heard] == ["interrupcao.aberta", TICK]
    assert heard[0].payload["pedidoId"] == "4821"
    assert ledger.attempts(COUNTER) == 1
    assert ledger.get(CLAIM.chave) is not None
    assert interruptions.get(ident).entidade_id == "4821"
    assert [e.type for e in events.after(0)] == ["interrupcao.aberta", TICK]


def test_a_failure_inside_the_unit_rolls_every_part_back_and_publishes_nothing(
    any_db: Database,
) -> None:
    events, ledger = EventLog(any_db), SqlLedger(any_db)
    interruptions = Interruptions(events)
    heard = _heard(events)

    def doomed() -> None:
        with UnitOfWork(any_db).begin() as tx:
            ledger.reserve(COUNTER, CLAIM, tx=tx)
            interruptions.open(
                conversa_id="conv-1",
                entidade_id="c-17",
                ferramenta="atualizar-cadastro",
                motivo="teto_de_voltas",
                argumentos={},
                attempts=5,
                tx=tx,
            )
            events.append(TICK, {"i": 2, "t": 0.0}, tx=tx)
            raise Boom

    with pytest.raises(Boom):
        doomed()
    assert heard == []
    assert ledger.attempts(COUNTER) == 0
    assert ledger.get(CLAIM.chave) is None
    assert interruptions.unresolved() == []
    assert events.after(0) == []


def test_completion_in_a_unit_is_undone_with_it(any_db: Database) -> None:
    ledger = SqlLedger(any_db)
    assert ledger.reserve(COUNTER, CLAIM).claim == "claimed"

    def doomed() -> None:
        with UnitOfWork(any_db).begin() as tx:
            ledger.complete(CLAIM.chave, {"debito": "d-1"}, tx=tx)
            raise Boom

    with pytest.raises(Boom):
        doomed()
    record = ledger.get(CLAIM.chave)
    assert record is not None
    assert record.status == "tentando"


def test_a_ledger_on_another_database_commits_on_its_own(
    sqlite_db: Database, tmp_path: Path
) -> None:
    other = open_database(f"sqlite:///{tmp_path / 'ledger.sqlite3'}")
    migrate(other)
    try:
        ledger = SqlLedger(other)

        def doomed() -> None:
            with UnitOfWork(sqlite_db).begin() as tx:
                ledger.reserve(COUNTER, CLAIM, tx=tx)
                raise Boom

        with pytest.raises(Boom):
            doomed()
        # One transaction cannot span two databases: the ledger's write stands.
        assert ledger.attempts(COUNTER) == 1
    finally:
        other.close()


def test_a_unit_nobody_writes_to_opens_no_transaction(sqlite_db: Database) -> None:
    events = EventLog(sqlite_db)
    with UnitOfWork(sqlite_db).begin():
        # The unit is open but holds no SQLite write lock, so this own-transaction append
        # on the same connection does not collide with it.
        events.append(TICK, {"i": 3, "t": 0.0})
    assert [e.type for e in events.after(0)] == [TICK]
