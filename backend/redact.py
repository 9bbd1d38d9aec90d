"""URLs as they may be shown: no credentials, the host kept.

A URL from settings can carry secrets in two places: its userinfo
(``http://user:PASSWORD@host``) and its query (``?key=K``, ``?api-version=…&sig=…``).
Whatever shows, logs or records a URL — a provider's spec on the roster, an error
message, an event, a log line — passes it through :func:`redact_url`; free text that may
quote one (an exception's message) goes through :func:`redact_text`.
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

HIDDEN = "***"
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
"""An absolute URL in free text (up to the first space or quote)."""


def redact_url(url: str) -> str:
    """``url`` with its userinfo and every query value replaced by ``***``.

    ``http://user:PASS@host:8080/v1?key=K&x`` → ``http://***@host:8080/v1?key=***&x``.
    The scheme, host, port, path and query keys stay, so an operator still sees where a
    call went. A string that is not a URL comes back unchanged.
    """
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return _redact_unparsed(url)
    if not parts.scheme or not parts.netloc:
        return url
    return _join(parts)


def redact_text(text: str) -> str:
    """``text`` with every absolute URL in it passed through :func:`redact_url`."""
    if "://" not in text:
        return text
    return _URL.sub(lambda found: redact_url(found.group(0)), text)


def _join(parts: SplitResult) -> str:
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{HIDDEN}@{netloc.rpartition('@')[2]}"
    out = f"{parts.scheme}://{netloc}{parts.path}"
    if parts.query:
        out += f"?{_hide_values(parts.query)}"
    if parts.fragment:
        out += f"#{_hide_values(parts.fragment)}"
    return out


def _hide_values(query: str) -> str:
    pairs = (pair.partition("=") for pair in query.split("&"))
    return "&".join(f"{key}={HIDDEN}" if sep and value else key + sep for key, sep, value in pairs)


def _redact_unparsed(url: str) -> str:
    # Malformed (a bad port) but possibly secret-bearing: hide any userinfo and the query.
    head, query, _ = url.partition("?")
    scheme, sep, rest = head.partition("://")
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        authority = f"{HIDDEN}@{authority.rpartition('@')[2]}"
    return f"{scheme}{sep}{authority}{slash}{path}" + (f"?{HIDDEN}" if query else "")
