"""``cadencia console [--url URL] [--token T] [--readonly] [--operator NAME] [--bell]``.

Connects the operator console to a running backend. This module is the only place in
``backend`` that imports ``console``, and only inside the handler (cheap import).
"""

from __future__ import annotations

import argparse
import os
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``console`` command."""
    parser = subparsers.add_parser(
        "console",
        help="open the operator console against a running backend",
        description="Keyboard-driven operator console (Textual) for a running backend.",
    )
    parser.add_argument(
        "--url",
        default=None,
        help="backend URL (default: CADENCIA_URL or http://CADENCIA_HOST:CADENCIA_PORT)",
    )
    parser.add_argument(
        "--token",
        default=None,
        help="bearer token (default: CADENCIA_TOKEN, else the token file in the data dir)",
    )
    parser.add_argument("--data-dir", default=None, help="where the backend keeps its token file")
    parser.add_argument(
        "--readonly", action="store_true", help="watch only: every operator action is refused"
    )
    parser.add_argument(
        "--operator", default=None, help="who actions are recorded as (CADENCIA_OPERATOR, $USER)"
    )
    parser.add_argument(
        "--bell", action="store_true", help="ring the terminal bell when a new Inbox item arrives"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the console until the operator quits."""
    from backend.settings import load_settings
    from console.app import run_console

    settings = load_settings(data_dir=args.data_dir)
    token = args.token or settings.token
    token_file = settings.data_dir / "token"
    if token is None and token_file.exists():
        token = token_file.read_text(encoding="utf-8").strip()
    url = args.url or os.environ.get("CADENCIA_URL") or f"http://{settings.host}:{settings.port}"
    return run_console(
        url, token=token, readonly=args.readonly, operator=args.operator, bell=args.bell
    )
