"""Structured log lines (one JSON object per line) for the headless backend.

A log file outlives the process and reaches more people than the API does, so every line
is written without URL credentials (libraries log the URLs they call, userinfo and query
included) and the access log records paths without their query strings.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

from backend.clock import utc_iso
from backend.redact import redact_text


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "msg", ...extra}``."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": utc_iso(datetime.fromtimestamp(record.created, UTC)),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": redact_text(record.getMessage()),
        }
        if record.exc_info:
            line["exc"] = redact_text(self.formatException(record.exc_info))
        return json.dumps(line, ensure_ascii=False)


class PathOnlyAccess(logging.Filter):
    """uvicorn's access line with the request's path only: a query string may carry a
    token, a signature or customer data (uvicorn logs ``client, method, path?query,
    http version, status``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) >= 3 and isinstance(args[2], str):
            record.args = (*args[:2], args[2].split("?", 1)[0], *args[3:])
        return True


def configure(level: str = "INFO", *, stream: object = None) -> None:
    """Send every logger (uvicorn's included) through one JSON handler."""
    handler = logging.StreamHandler(stream or sys.stderr)  # type: ignore[arg-type]
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
    access = logging.getLogger("uvicorn.access")
    access.filters[:] = [f for f in access.filters if not isinstance(f, PathOnlyAccess)]
    access.addFilter(PathOnlyAccess())
