"""DynamoDB-specific ledger behaviour on moto's server over real HTTP: table, keys, errors, URLs."""

from __future__ import annotations

import time
import uuid
from typing import Any

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, EndpointConnectionError

from backend.exceptions import ConfigError, LedgerError
from backend.ledger.base import ClaimRequest, counter_key, payload_hash
from backend.ledger.dynamodb import DynamoLedger, create_table, drop_table
from backend.ledger.factory import open_ledger, parse_dynamodb_url
from backend.settings import Settings, load_settings


@pytest.fixture
def client(moto_endpoint: str) -> Any:
    return boto3.client("dynamodb", endpoint_url=moto_endpoint, region_name="us-east-1")


@pytest.fixture
def table(client: Any) -> Any:
    name = f"ledger-{uuid.uuid4().hex[:10]}"
    create_table(client, name)
    yield name
    drop_table(client, name)


def _claim(chave: str) -> ClaimRequest:
    return ClaimRequest(
        chave,
        "emitir-reembolso",
        "conv-1",
        "4821",
        payload_hash({"pedidoId": "4821", "valor": "10.00"}),
        "10.00",
    )


def test_create_table_is_idempotent_and_matches_terraform(client: Any) -> None:
    name = f"ledger-{uuid.uuid4().hex[:10]}"
    assert create_table(client, name) is True
    assert create_table(client, name) is False
    desc = client.describe_table(TableName=name)["Table"]
    assert desc["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    assert desc["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    ttl = client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    assert ttl["AttributeName"] == "expira_em"
    assert ttl["TimeToLiveStatus"] == "ENABLED"
    assert drop_table(client, name) is True
    assert drop_table(client, name) is False


def test_item_layout_counter_has_ttl_claim_never_expires(client: Any, table: str) -> None:
    ledger = DynamoLedger(client, table, counter_ttl_seconds=3600)
    teto = counter_key("conv-1", "4821", "emitir-reembolso")
    for _ in range(6):
        ledger.reserve(teto, _claim("conv-1#4821#emitir-reembolso"))
    counter = client.get_item(TableName=table, Key={"pk": {"S": teto}})["Item"]
    assert (counter["attempts"]["N"], counter["blocked"]["N"]) == ("4", "2")
    assert abs(int(counter["expira_em"]["N"]) - (time.time() + 3600)) < 60
    claim = client.get_item(TableName=table, Key={"pk": {"S": "conv-1#4821#emitir-reembolso"}})
    assert claim["Item"]["status"]["S"] == "tentando"
    assert "expira_em" not in claim["Item"]  # at most once per pedido must outlive retention
    assert ledger.attempts(teto) == 6


def test_numbers_come_back_as_python_numbers(client: Any, table: str) -> None:
    ledger = DynamoLedger(client, table)
    ledger.reserve(counter_key("c", "p", "f"), _claim("k"))
    ledger.complete("k", {"debito": "d-1", "tentativas": 2})
    record = ledger.get("k")
    assert record is not None
    assert isinstance(record.lease_until, float)
    assert record.lease_until > time.time()
    assert record.resultado == {"debito": "d-1", "tentativas": 2}
    assert ledger.get(counter_key("c", "p", "f")) is None  # a counter is not a record


def test_missing_table_is_a_ledger_error(client: Any) -> None:
    ledger = DynamoLedger(client, "no-such-table")
    with pytest.raises(LedgerError, match="create_table") as info:
        ledger.reserve(counter_key("c", "p", "f"), None)
    assert isinstance(info.value.__cause__, ClientError)
    assert info.value.context["code"] == "ResourceNotFoundException"


def test_unreachable_dynamodb_is_a_ledger_error() -> None:
    client = boto3.client(
        "dynamodb",
        endpoint_url="http://127.0.0.1:9",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=1),
    )
    with pytest.raises(LedgerError) as info:
        DynamoLedger(client, "t").get("k")
    assert isinstance(info.value.__cause__, EndpointConnectionError)


def test_parse_dynamodb_url_prefers_url_over_settings() -> None:
    settings = load_settings(aws_region="eu-west-1", aws_endpoint_url="http://elsewhere:1")
    table, kwargs = parse_dynamodb_url(
        "dynamodb://cadencia-ledger?endpoint_url=http://127.0.0.1:5000&region=sa-east-1", settings
    )
    assert table == "cadencia-ledger"
    assert kwargs == {"region_name": "sa-east-1", "endpoint_url": "http://127.0.0.1:5000"}
    assert parse_dynamodb_url("dynamodb://ledger", settings)[1] == {
        "region_name": "eu-west-1",
        "endpoint_url": "http://elsewhere:1",
    }


@pytest.mark.parametrize(
    "url", ["dynamodb://", "dynamodb://a/b", "dynamodb://t?endpoint=x", "redis://x", "nonsense"]
)
def test_bad_ledger_urls_are_config_errors(url: str, settings: Settings) -> None:
    with pytest.raises(ConfigError):
        open_ledger(url, settings)


def test_open_ledger_takes_ceiling_from_settings(
    moto_endpoint: str, client: Any, table: str
) -> None:
    settings = load_settings(teto_de_voltas=2, ledger_lease_seconds=7)
    ledger = open_ledger(f"dynamodb://{table}?endpoint_url={moto_endpoint}", settings)
    assert isinstance(ledger, DynamoLedger)
    assert (ledger.teto, ledger.lease_seconds) == (2, 7)
    got = [ledger.reserve(counter_key("c", "p", "f"), None).bloqueado_por_teto for _ in range(3)]
    assert got == [False, False, True]


def test_open_ledger_sql_shares_the_given_database(sqlite_db: Any, settings: Settings) -> None:
    from backend.ledger.sql import SqlLedger

    ledger = open_ledger(sqlite_db.url, settings, db=sqlite_db)
    assert isinstance(ledger, SqlLedger)
    assert ledger.db is sqlite_db
    assert ledger.reserve(counter_key("c", "p", "f"), _claim("k")).claim == "claimed"


def _count_calls(client: Any) -> list[str]:
    calls: list[str] = []
    client.meta.events.register(
        "before-call.dynamodb.*", lambda model, **_: calls.append(model.name)
    )
    return calls


def test_repeat_of_an_executed_claim_costs_one_round_trip(client: Any, table: str) -> None:
    ledger = DynamoLedger(client, table)
    teto = counter_key("c", "4821", "emitir-reembolso")
    ledger.reserve(teto, _claim("k"))
    ledger.complete("k", {"debito": "d-1"})
    calls = _count_calls(client)
    elsewhere = DynamoLedger(client, table)  # another process: learns "k" from the put
    first = elsewhere.reserve(teto, _claim("k"))
    assert first.claim == "duplicate"
    assert calls == ["UpdateItem", "PutItem"]
    calls.clear()
    assert elsewhere.reserve(teto, _claim("k")).claim == "duplicate"
    assert calls == ["UpdateItem"]
    calls.clear()
    again = ledger.reserve(teto, _claim("k"))  # learned from its own complete()
    assert again.claim == "duplicate"
    assert again.record
    assert again.record.resultado == {"debito": "d-1"}
    assert calls == ["UpdateItem"]  # the ceiling is still counted, the put is skipped
    assert again.tentativa == 4
    other = ledger.reserve(
        counter_key("c9", "4821", "emitir-reembolso"),
        ClaimRequest("k", "emitir-reembolso", "c9", "4821", "other-hash", "9.99"),
    )
    assert other.claim == "conflict"


def test_executed_cache_only_errs_towards_blocking(client: Any, table: str) -> None:
    this_process = DynamoLedger(client, table)
    this_process.reserve(counter_key("c1", "p", "f"), _claim("k"))
    this_process.complete("k", {"ok": True})
    assert this_process.reserve(counter_key("c2", "p", "f"), _claim("k")).claim == "duplicate"
    client.delete_item(TableName=table, Key={"pk": {"S": "k"}})  # an operator's manual release
    assert this_process.reserve(counter_key("c3", "p", "f"), _claim("k")).claim == "duplicate"
    another_process = DynamoLedger(client, table)
    assert another_process.reserve(counter_key("c4", "p", "f"), _claim("k")).claim == "claimed"


def test_a_conditional_write_botocore_retried_after_it_applied_counts_as_applied(
    client: Any, table: str
) -> None:
    """botocore re-sends a request whose answer it did not get; a conditional write that
    was applied then fails its own condition on the retry. Here every successful PutItem
    and UpdateItem is sent a second time: the claim is still ours, the completion and the
    expiry still happened (not someone else's claim, a LedgerError and [])."""
    resent: list[str] = []

    def once_more(attempts: int, response: Any, operation: Any, **_: Any) -> int | None:
        applied = response is not None and response[0].status_code == 200
        if attempts == 1 and applied and operation.name in ("PutItem", "UpdateItem"):
            resent.append(operation.name)
            return 0  # retry at once, as after a lost answer
        return None

    client.meta.events.register_first("needs-retry.dynamodb", once_more)
    ledger = DynamoLedger(client, table, lease_seconds=-1.0)  # every lease has run out
    teto = counter_key("conv-1", "4821", "emitir-reembolso")
    assert ledger.reserve(teto, _claim("done"), count=False).claim == "claimed"
    ledger.complete("done", {"ok": True})
    assert ledger.reserve(teto, _claim("old"), count=False).claim == "claimed"
    assert ledger.expire_stale() == ["old"]
    assert resent == ["PutItem", "UpdateItem", "PutItem", "UpdateItem"]
    assert {c: ledger.get(c).status for c in ("done", "old")} == {  # type: ignore[union-attr]
        "done": "executado",
        "old": "resultado_incerto",
    }


def test_two_claims_stamped_in_the_same_instant_do_not_both_win(client: Any, table: str) -> None:
    """Two processes claim one key with one payload at the same stamp: the second's put
    fails its condition, and the item it finds is not its own write, whatever the stamp."""
    row = {
        "chave": "same-instant",
        "ferramenta": "emitir-reembolso",
        "conversa_id": "conv-1",
        "entidade_id": "4821",
        "payload_hash": payload_hash({"pedidoId": "4821", "valor": "10.00"}),
        "valor": "10.00",
        "lease_until": time.time() + 30,
    }
    now = "2026-01-01T00:00:00.000Z"
    first, second = DynamoLedger(client, table), DynamoLedger(client, table)
    assert first._reserve(None, 4, row, now, None).inserted
    assert not second._reserve(None, 4, row, now, None).inserted
