"""``cadencia serve``: the backend, headless (servers and CI)."""

from __future__ import annotations

import argparse

from backend.commands._common import add_data_dir


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("serve", help="run the backend headless (HTTP API on 127.0.0.1 by default)")
    p.add_argument("--host", default=None, help="bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default 8765)")
    p.add_argument("--demo", action="store_true", help="run the demo pipeline once started")
    p.add_argument("--database", default=None, help="sqlite:///FILE or postgresql://…")
    p.add_argument("--ledger", default=None, help="ledger URL (default: the database)")
    p.add_argument("--log-level", default="INFO")
    add_data_dir(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import logging

    import uvicorn

    from backend import logs
    from backend.api.app import create_app
    from backend.core import resolve_token
    from backend.settings import load_settings

    settings = load_settings(data_dir=args.data_dir, database_url=args.database, ledger_url=args.ledger,
                             host=args.host, port=args.port)
    logs.configure(args.log_level)
    token, generated = resolve_token(settings)
    if generated:
        # Printed once, on the run that created it; afterwards it lives in the data dir.
        print(f"API token (saved to {settings.data_dir / 'token'}, mode 0600): {token}", flush=True)
    logging.getLogger("cadencia").info(
        "serving on http://%s:%d (data dir %s)", settings.host, settings.port, settings.data_dir
    )
    uvicorn.run(
        create_app(settings, demo=args.demo),
        host=settings.host,
        port=settings.port,
        log_config=None,
        timeout_graceful_shutdown=30,
    )
    return 0
