"""How a console is launched: where the backend is and who is at the keyboard."""

from __future__ import annotations

import getpass
import os

from pydantic import BaseModel, Field


def default_operator() -> str:
    """``CADENCIA_OPERATOR``, else the login name, else ``operator``."""
    name = os.environ.get("CADENCIA_OPERATOR")
    if name:
        return name
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "operator"


class ConsoleSettings(BaseModel):
    """Everything :func:`console.app.make_console` needs."""

    url: str = "http://127.0.0.1:8765"
    token: str | None = None
    readonly: bool = False
    operator: str = Field(default_factory=default_operator)
    bell: bool = False
    """Ring the terminal bell when an Inbox item the console has not seen before arrives, and
    once when an item breaches its deadline (or arrives breached)."""
    feed_max_lines: int = Field(default=5_000, ge=100)
    stale_after_s: float = Field(default=20.0, gt=0)
    """No byte (not even a heartbeat) for this long shows the connection as stale."""
