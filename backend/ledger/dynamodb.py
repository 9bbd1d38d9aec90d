"""Ledger storage on DynamoDB through an injected boto3 client.

One table, hash key ``pk`` only, TTL attribute ``expira_em`` (:class:`DynamoLedger` shows
the items). The ceiling is one bounded increment on the counter item, the claim one
conditional put; each write commits on its own (a unit of work cannot join DynamoDB) and
carries a ``write_id`` by which a re-sent write recognises itself. Why:
docs/decisions/0007-dynamodb-ledger-counter-and-write-ids.md.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from backend.exceptions import LedgerError
from backend.ledger.base import Ledger, RecordStatus, StoredReservation
from backend.ledger.dynamodb_items import decode, encode, record_row

if TYPE_CHECKING:
    from backend.store.uow import Work

_CONDITION_FAILED = "ConditionalCheckFailedException"
_CLAIM_FIELDS = ("ferramenta", "conversa_id", "entidade_id", "payload_hash", "valor", "gateway")


class _ConditionFailed(Exception):
    """A conditional write found the item in another state (``item`` is its old image)."""

    def __init__(self, item: dict[str, Any] | None) -> None:
        super().__init__("conditional check failed")
        self.item = item


class DynamoLedger(Ledger):
    """Storage for :class:`~backend.ledger.base.Ledger` on one DynamoDB table.

    Items::

        pk = "teto#<conversa>#<entidade>#<ferramenta>"   attempts N, blocked N, expira_em N
        pk = "<chave de idempotencia>"                   status, payload_hash, lease_until, ...
    """

    def __init__(
        self,
        client: Any,
        table: str,
        *,
        teto: int = 4,
        lease_seconds: float = 30.0,
        counter_ttl_seconds: int | None = 30 * 24 * 3600,
        executed_cache_size: int = 4096,
    ) -> None:
        super().__init__(teto=teto, lease_seconds=lease_seconds)
        self.client = client
        self.table = table
        self.counter_ttl_seconds = counter_ttl_seconds
        self._executed: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._executed_max = executed_cache_size
        self._executed_lock = threading.Lock()

    def _remember(self, row: dict[str, Any] | None) -> dict[str, Any] | None:
        """Cache ``row`` if it is terminal (``executado``); return it unchanged."""
        if row is not None and row.get("status") == "executado" and self._executed_max > 0:
            with self._executed_lock:
                self._executed[row["chave"]] = row
                self._executed.move_to_end(row["chave"])
                while len(self._executed) > self._executed_max:
                    self._executed.popitem(last=False)
        return row

    def _known_executed(self, chave: str) -> dict[str, Any] | None:
        with self._executed_lock:
            row = self._executed.get(chave)
        return dict(row) if row is not None else None

    # -- boundary ---------------------------------------------------------------------------

    def _call(self, operation: str, **kwargs: Any) -> dict[str, Any]:
        """Run one client operation; botocore errors become :class:`LedgerError`."""
        try:
            response: dict[str, Any] = getattr(self.client, operation)(
                TableName=self.table, **kwargs
            )
            return response
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code == _CONDITION_FAILED:
                raise _ConditionFailed(exc.response.get("Item")) from exc
            hint = (
                " (create it with backend.ledger.dynamodb.create_table)"
                if (code == "ResourceNotFoundException")
                else ""
            )
            raise LedgerError(
                f"DynamoDB {operation} on {self.table!r} failed: {code}{hint}",
                table=self.table,
                operation=operation,
                code=code,
            ) from exc
        except BotoCoreError as exc:
            raise LedgerError(
                f"DynamoDB {operation} on {self.table!r} failed: {exc}",
                table=self.table,
                operation=operation,
            ) from exc

    @staticmethod
    def _key(pk: str) -> dict[str, Any]:
        return {"pk": {"S": pk}}

    # -- storage ----------------------------------------------------------------------------

    def _reserve(
        self,
        counter: str | None,
        teto: int,
        claim_row: dict[str, Any] | None,
        now: str,
        tx: Work | None,
    ) -> StoredReservation:
        attempts, blocked = self._bump(counter, teto) if counter is not None else (0, 0)
        if blocked or claim_row is None:
            return StoredReservation(attempts, blocked, False, None)
        known = self._known_executed(claim_row["chave"])
        if known is not None:
            return StoredReservation(attempts, blocked, False, known)
        item = {"pk": encode(claim_row["chave"]), "status": encode("tentando")}
        for field in (*_CLAIM_FIELDS, "lease_until"):
            if claim_row.get(field) is not None:
                item[field] = encode(claim_row[field])
        item["created_at"] = item["updated_at"] = encode(now)
        item["write_id"] = {"S": (write := _write_id())}
        try:
            self._call(
                "put_item",
                Item=item,
                ConditionExpression="attribute_not_exists(pk)",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except _ConditionFailed as failed:
            if _ours(failed.item, "tentando", write, claim_row):
                return StoredReservation(attempts, blocked, True, None)
            existing = record_row(failed.item) if failed.item else self._get(claim_row["chave"], tx)
            return StoredReservation(attempts, blocked, False, self._remember(existing))
        return StoredReservation(attempts, blocked, True, None)

    def _bump(self, counter: str, teto: int) -> tuple[int, int]:
        """The bounded increment: ``attempts`` below ``teto`` grows, else ``blocked`` does."""
        # Kept minimal on purpose: this runs on every attempt (no updated_at on counters).
        values: dict[str, Any] = {":one": {"N": "1"}}
        set_clause = ""
        if self.counter_ttl_seconds is not None:
            values[":exp"] = {"N": str(int(time.time()) + self.counter_ttl_seconds)}
            set_clause = " SET expira_em = :exp"
        try:
            got = self._call(
                "update_item",
                Key=self._key(counter),
                UpdateExpression=f"ADD attempts :one{set_clause}",
                ConditionExpression="attribute_not_exists(attempts) OR attempts < :max",
                ExpressionAttributeValues={**values, ":max": {"N": str(teto)}},
                ReturnValues="UPDATED_NEW",
            )
            return int(got["Attributes"]["attempts"]["N"]), 0
        except _ConditionFailed:
            got = self._call(
                "update_item",
                Key=self._key(counter),
                UpdateExpression=f"ADD blocked :one{set_clause}",
                ExpressionAttributeValues=values,
                ReturnValues="ALL_NEW",
            )
            row = decode(got["Attributes"])
            return int(row.get("attempts", 0)), int(row["blocked"])

    def _get(self, chave: str, tx: Work | None) -> dict[str, Any] | None:
        got = self._call("get_item", Key=self._key(chave), ConsistentRead=True)
        item = got.get("Item")
        return self._remember(record_row(item)) if item else None

    def _retake(self, chave: str, claim_row: dict[str, Any], now: str, tx: Work | None) -> bool:
        values: dict[str, Any] = {
            ":tentando": {"S": "tentando"},
            ":falhou": {"S": "falhou"},
            ":conversa": encode(claim_row["conversa_id"]),
            ":hash": encode(claim_row["payload_hash"]),
            ":lease": encode(claim_row["lease_until"]),
            ":now": {"S": now},
            ":write": {"S": (write := _write_id())},
        }
        sets = [
            "#st = :tentando",
            "conversa_id = :conversa",
            "payload_hash = :hash",
            "lease_until = :lease",
            "updated_at = :now",
            "write_id = :write",
        ]
        removes = ["resultado"]
        for field in ("valor", "gateway"):  # the new claim's, or none
            if claim_row.get(field) is None:
                removes.append(field)
            else:
                sets.append(f"{field} = :{field}")
                values[f":{field}"] = encode(claim_row[field])
        try:
            self._call(
                "update_item",
                Key=self._key(chave),
                UpdateExpression=f"SET {', '.join(sets)} REMOVE {', '.join(removes)}",
                ConditionExpression="#st = :falhou",
                ExpressionAttributeNames={"#st": "status"},
                ExpressionAttributeValues=values,
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except _ConditionFailed as failed:
            return _ours(failed.item, "tentando", write, claim_row)
        return True

    def _finish(
        self,
        chave: str,
        expected: RecordStatus,
        status: RecordStatus,
        resultado: dict[str, Any] | None,
        now: str,
        tx: Work | None,
    ) -> bool:
        values: dict[str, Any] = {
            ":expected": {"S": expected},
            ":status": {"S": status},
            ":now": {"S": now},
            ":write": {"S": (write := _write_id())},
        }
        stamp = "SET #st = :status, updated_at = :now, write_id = :write"
        if resultado is None:
            update = f"{stamp} REMOVE resultado"
        else:
            update = f"{stamp}, resultado = :res"
            values[":res"] = {"S": json.dumps(resultado, ensure_ascii=False, default=str)}
        try:
            got = self._call(
                "update_item",
                Key=self._key(chave),
                UpdateExpression=update,
                ConditionExpression="#st = :expected",
                ExpressionAttributeNames={"#st": "status"},
                ExpressionAttributeValues=values,
                # The new image is free here and lets this process skip the next put.
                ReturnValues="ALL_NEW" if status == "executado" else "NONE",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except _ConditionFailed as failed:
            return _ours(failed.item, status, write)
        if "Attributes" in got:
            self._remember(record_row(got["Attributes"]))
        return True

    def _expire(self, epoch: float, now: str) -> list[str]:
        condition = "#st = :tentando AND lease_until < :epoch"
        values = {":tentando": {"S": "tentando"}, ":epoch": encode(epoch)}
        expired: list[str] = []
        for item in self._scan(condition, values):
            write = _write_id()
            try:
                # Re-checked per item: a claim completed after the scan read it stays as is.
                self._call(
                    "update_item",
                    Key={"pk": item["pk"]},
                    UpdateExpression="SET #st = :incerto, updated_at = :now, write_id = :write",
                    ConditionExpression=condition,
                    ExpressionAttributeNames={"#st": "status"},
                    ExpressionAttributeValues={
                        **values,
                        ":incerto": {"S": "resultado_incerto"},
                        ":now": {"S": now},
                        ":write": {"S": write},
                    },
                    ReturnValuesOnConditionCheckFailure="ALL_OLD",
                )
            except _ConditionFailed as failed:
                if not _ours(failed.item, "resultado_incerto", write):
                    continue
            expired.append(item["pk"]["S"])
        return expired

    def _by_status(self, status: RecordStatus) -> list[dict[str, Any]]:
        items = self._scan("#st = :status", {":status": {"S": status}})
        rows = [row for row in map(record_row, items) if row is not None]
        return sorted(rows, key=lambda r: str(r["created_at"]))

    def _scan(self, condition: str, values: dict[str, Any]) -> list[dict[str, Any]]:
        """Every item matching ``condition`` (operator paths only; reads the whole table)."""
        items: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {
            "FilterExpression": condition,
            "ExpressionAttributeNames": {"#st": "status"},
            "ExpressionAttributeValues": values,
            "ConsistentRead": True,
        }
        while True:
            page = self._call("scan", **kwargs)
            items.extend(page.get("Items", []))
            if "LastEvaluatedKey" not in page:
                return items
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _counter(self, counter: str, tx: Work | None) -> tuple[int, int] | None:
        got = self._call("get_item", Key=self._key(counter), ConsistentRead=True)
        item = got.get("Item")
        if not item:
            return None
        row = decode(item)
        return int(row.get("attempts", 0)), int(row.get("blocked", 0))


def _write_id() -> str:
    """A fresh id for one conditional write, so a retry of it can tell it is its own."""
    return uuid.uuid4().hex


def _ours(
    item: dict[str, Any] | None,
    status: RecordStatus,
    write: str,
    claim_row: dict[str, Any] | None = None,
) -> bool:
    """Whether a conditional write that "failed" was this call's own, applied by an earlier
    try of the same request: the item is in the state it wrote, carrying its ``write`` id
    (and, for a claim, holds its payload)."""
    if not item:
        return False
    row = decode(item)
    if row.get("status") != status or row.get("write_id") != write:
        return False
    return claim_row is None or row.get("payload_hash") == claim_row["payload_hash"]


def create_table(client: Any, name: str, *, wait: bool = True) -> bool:
    """Create the ledger table (on-demand, hash key ``pk``, TTL ``expira_em``) if missing.

    Idempotent: returns True when it created the table, False when it already existed.
    The layout matches ``deploy/terraform`` (``hash_key = "pk"``).
    """
    created = True
    try:
        client.create_table(
            TableName=name,
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        )
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") != "ResourceInUseException":
            raise LedgerError(f"cannot create DynamoDB table {name!r}: {exc}", table=name) from exc
        created = False
    except BotoCoreError as exc:
        raise LedgerError(f"cannot create DynamoDB table {name!r}: {exc}", table=name) from exc
    try:
        if wait:
            client.get_waiter("table_exists").wait(
                TableName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60}
            )
        if created:
            client.update_time_to_live(
                TableName=name,
                TimeToLiveSpecification={"Enabled": True, "AttributeName": "expira_em"},
            )
    except ClientError as exc:
        # Real DynamoDB refuses to re-enable TTL that is already on; that is fine.
        if "already enabled" not in str(exc).lower():
            raise LedgerError(
                f"cannot configure DynamoDB table {name!r}: {exc}", table=name
            ) from exc
    except BotoCoreError as exc:
        raise LedgerError(f"cannot configure DynamoDB table {name!r}: {exc}", table=name) from exc
    return created


def drop_table(client: Any, name: str) -> bool:
    """Delete the ledger table; False when it did not exist (for ``teardown``)."""
    try:
        client.delete_table(TableName=name)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ResourceNotFoundException":
            return False
        raise LedgerError(f"cannot delete DynamoDB table {name!r}: {exc}", table=name) from exc
    except BotoCoreError as exc:
        raise LedgerError(f"cannot delete DynamoDB table {name!r}: {exc}", table=name) from exc
    return True
