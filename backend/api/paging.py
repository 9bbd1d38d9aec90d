"""Cursor pagination: the one convention of every list route.

A list route answers a JSON array (so clients written before pagination keep working) of
at most ``limit`` items (default :data:`DEFAULT_LIMIT`, at most :data:`MAX_LIMIT`). When
more follow, the response carries the next page's opaque cursor in ``X-Next-Cursor`` and
the URL that fetches it in ``Link: <url>; rel="next"``; no such header means the last page.
A cursor is a keyset position, so a page costs the same at item 10 and at item 10 million
(:func:`encode_cursor`).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Annotated, Any, TypeVar

from fastapi import Query, Request, Response

from backend.exceptions import ValidationError

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
MAX_CURSOR_CHARS = 512
_MAX_INT = 2**53  # what a JSON client can hold exactly
_MAX_TEXT = 200
_B64URL = re.compile(r"^[A-Za-z0-9_-]+$")

Cursor = Annotated[
    str | None,
    Query(
        max_length=MAX_CURSOR_CHARS,
        description="opaque: the `X-Next-Cursor` of the previous page of this route",
    ),
]
PageLimit = Annotated[int, Query(ge=1, le=MAX_LIMIT, description="items per page")]
KeyPart = int | str
T = TypeVar("T")


class Stamp(str):
    """A cursor's timestamp part (a shape marker): text that parses as ISO 8601, checked
    before the database casts it (PostgreSQL would refuse it with an error of ours)."""


NEXT_HEADERS: dict[str, dict[str, Any]] = {
    "X-Next-Cursor": {
        "description": "cursor of the next page (absent on the last page)",
        "schema": {"type": "string"},
    },
    "Link": {
        "description": 'the next page\'s URL, `<url>; rel="next"` (absent on the last page)',
        "schema": {"type": "string"},
    },
}
PAGED: dict[int | str, dict[str, Any]] = {200: {"headers": NEXT_HEADERS}}
"""``responses=`` of a paginated route: documents the next-page headers in OpenAPI."""


class BadCursorError(ValidationError):
    """A cursor this route did not issue (garbage, another route's, out of range)."""

    code = "bad_cursor"


def encode_cursor(route: str, key: Sequence[KeyPart]) -> str:
    """The opaque cursor of ``route`` positioned after the item whose sort key is ``key``.

    A cursor is the keyset position of the last item sent (its sort key and id), tagged with
    the route that issued it, base64url-encoded JSON. The server reads the next page with
    ``WHERE (key, id) > (cursor) ORDER BY key, id LIMIT limit + 1`` on an index, so a page
    costs the same at item 10 and at item 10 million (no ``OFFSET``). A cursor is not secret:
    forging one only moves the position; a malformed one, or one another route issued, is
    refused with 422 ``bad_cursor`` and nothing is read (:func:`decode_cursor`).
    """
    raw = json.dumps([route, *key], separators=(",", ":"), ensure_ascii=True)
    return base64.urlsafe_b64encode(raw.encode()).rstrip(b"=").decode()


def decode_cursor(
    route: str, cursor: str | None, shape: Sequence[type[KeyPart]]
) -> tuple[KeyPart, ...] | None:
    """The key inside ``cursor`` (None without one), checked against ``shape``.

    Raises:
        BadCursorError: not one of this route's cursors.
    """
    if cursor is None:
        return None
    value = _loads(cursor)
    if (
        not isinstance(value, list)
        or len(value) != len(shape) + 1
        or value[0] != route
        or not all(_fits(part, kind) for part, kind in zip(value[1:], shape, strict=True))
    ):
        raise BadCursorError(f"cursor {_short(cursor)} was not issued by this route")
    return tuple(value[1:])


def next_page(
    request: Request,
    response: Response,
    rows: list[T],
    limit: int,
    route: str,
    key: Callable[[T], Sequence[KeyPart]],
    *,
    drop: Sequence[str] = (),
) -> list[T]:
    """Trim ``rows`` (read with ``LIMIT limit + 1``) to ``limit`` and, when a row was left
    over, point the response at the next page (``drop``: query parameters that the cursor
    replaces, e.g. ``after``)."""
    if len(rows) <= limit:
        return rows
    rows = rows[:limit]
    set_next(request, response, encode_cursor(route, key(rows[-1])), drop=drop)
    return rows


def set_next(
    request: Request,
    response: Response,
    cursor: str,
    *,
    drop: Sequence[str] = (),
    params: dict[str, str | int] | None = None,
) -> None:
    """Set ``X-Next-Cursor`` and ``Link`` (this URL with ``cursor`` and ``params``)."""
    url = request.url.remove_query_params(["cursor", *drop]).include_query_params(
        **(params or {}), cursor=cursor
    )
    response.headers["X-Next-Cursor"] = cursor
    response.headers["Link"] = f'<{url}>; rel="next"'


def _loads(cursor: str) -> Any:
    if not _B64URL.match(cursor):
        raise BadCursorError(f"cursor {_short(cursor)} is not one this API issued")
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        return json.loads(raw.decode("ascii"))
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise BadCursorError(f"cursor {_short(cursor)} is not one this API issued") from exc


def _fits(part: Any, kind: type[KeyPart]) -> bool:
    if kind is int:
        return type(part) is int and 0 <= part <= _MAX_INT
    if type(part) is not str or len(part) > _MAX_TEXT or "\x00" in part:
        return False
    if kind is Stamp:
        try:
            datetime.fromisoformat(part)
        except ValueError:
            return False
    return True


def _short(cursor: str) -> str:
    return repr(cursor if len(cursor) <= 24 else cursor[:21] + "...")
