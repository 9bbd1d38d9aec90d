"""DynamoDB attribute values <-> the plain Python rows the ledger policy reads."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


def to_python(value: Any) -> Any:
    """boto3's ``Decimal`` numbers back as ``int``/``float``, recursively."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: to_python(v) for k, v in value.items()}
    if isinstance(value, (list, set)):
        return [to_python(v) for v in value]
    return value


def decode(item: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB item (typed attribute values) as a plain dict."""
    return {k: to_python(_deserializer.deserialize(v)) for k, v in item.items()}


def encode(value: Any) -> dict[str, Any]:
    """One Python value as a typed attribute value (floats go through ``Decimal``)."""
    if isinstance(value, float):
        value = Decimal(repr(value))
    return _serializer.serialize(value)  # type: ignore[no-any-return]


def record_row(item: dict[str, Any]) -> dict[str, Any] | None:
    """A storage item as the row shape :class:`LedgerRecord` reads (None for counters)."""
    row = decode(item)
    if "status" not in row:
        return None
    row["chave"] = row.pop("pk")
    row.pop("write_id", None)  # storage's own, see backend.ledger.dynamodb._ours
    row.setdefault("valor", None)
    row.setdefault("resultado", None)
    row.setdefault("gateway", None)
    return row
