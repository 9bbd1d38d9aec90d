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

from backend.redact import redact_text


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "msg", ...extra}``."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": redact_text(record.getMessage()),
        }
        if record.exc_info:
            line["exc"] = redact_text(self.formatException(record.exc_info))
        return json.dumps(line, ensure_ascii=False)


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
