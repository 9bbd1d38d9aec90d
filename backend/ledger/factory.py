"""Open the ledger named by a URL: ``sqlite:///…``, ``postgresql://…`` or ``dynamodb://TABLE``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlparse

from backend.exceptions import ConfigError
from backend.ledger.base import Ledger

if TYPE_CHECKING:
    from backend.settings import Settings
    from backend.store.db import Database

_DYNAMO_PARAMS = {"endpoint_url", "region"}
_TABLE_NAME = re.compile(r"^[A-Za-z0-9_.-]{3,255}$")


def parse_dynamodb_url(url: str, settings: Settings) -> tuple[str, dict[str, Any]]:
    """``dynamodb://TABLE?endpoint_url=…&region=…`` → (table, ``boto3.client`` kwargs).

    Endpoint and region not in the URL come from ``settings.boto3_kwargs()``.
    """
    parsed = urlparse(url)
    table = parsed.netloc + parsed.path.rstrip("/")
    if not _TABLE_NAME.match(table):
        raise ConfigError(
            f"DynamoDB ledger URL needs one valid table name ([A-Za-z0-9_.-]{{3,255}}): {url!r} "
            "(use dynamodb://TABLE?endpoint_url=…&region=…)",
            url=url,
        )
    query = parse_qs(parsed.query)
    unknown = set(query) - _DYNAMO_PARAMS
    if unknown:
        raise ConfigError(
            f"unknown DynamoDB ledger URL parameter(s) {sorted(unknown)}: "
            "only endpoint_url and region are understood",
            url=url,
        )
    kwargs = settings.boto3_kwargs()
    if "endpoint_url" in query:
        kwargs["endpoint_url"] = query["endpoint_url"][-1]
    if "region" in query:
        kwargs["region_name"] = query["region"][-1]
    return table, kwargs


def dynamodb_client(client_kwargs: dict[str, Any], *, max_pool_connections: int = 64) -> Any:
    """A thread-safe boto3 DynamoDB client sized for many concurrent callers."""
    import boto3
    from botocore.config import Config

    config = Config(
        max_pool_connections=max_pool_connections,
        retries={"mode": "standard", "max_attempts": 5},
    )
    return boto3.client("dynamodb", config=config, **client_kwargs)


def open_ledger(url: str, settings: Settings, *, db: Database | None = None) -> Ledger:
    """The ledger at ``url`` with the ceiling and lease from ``settings``.

    For SQL URLs the database must already be migrated (``backend.store.migrate.migrate``);
    pass ``db`` to share an open :class:`Database` instead of opening another pool.
    A DynamoDB table must exist (``backend.ledger.dynamodb.create_table``).
    """
    teto, lease = settings.teto_de_voltas, settings.ledger_lease_seconds
    scheme = urlparse(url).scheme
    if scheme in ("sqlite", "postgresql", "postgres"):
        from backend.ledger.sql import SqlLedger
        from backend.store.db import open_database

        return SqlLedger(
            db if db is not None else open_database(url), teto=teto, lease_seconds=lease
        )
    if scheme == "dynamodb":
        from backend.ledger.dynamodb import DynamoLedger

        table, client_kwargs = parse_dynamodb_url(url, settings)
        return DynamoLedger(dynamodb_client(client_kwargs), table, teto=teto, lease_seconds=lease)
    raise ConfigError(
        f"unsupported ledger URL scheme {scheme!r}: use sqlite:///FILE, postgresql://… "
        "or dynamodb://TABLE?endpoint_url=…&region=…",
        url=url,
    )
