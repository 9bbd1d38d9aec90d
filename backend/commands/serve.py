"""``cadencia serve``: the backend, headless (servers and CI)."""

from __future__ import annotations

import argparse
from typing import Any

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

    settings = load_settings(
        data_dir=args.data_dir,
        database_url=args.database,
        ledger_url=args.ledger,
        host=args.host,
        port=args.port,
    )
    logs.configure(args.log_level)
    _, generated = resolve_token(settings)
    if generated:
        # Where it is, never what it is: serve's output usually ends up in a log file or a
        # journal that more people read than the 0600 file.
        print(
            f"API token generated: {settings.data_dir / 'token'} (mode 0600; "
            f"read it with: cat {settings.data_dir / 'token'})",
            flush=True,
        )
    logging.getLogger("cadencia").info(
        "serving on http://%s:%d (data dir %s)", settings.host, settings.port, settings.data_dir
    )
    config = uvicorn.Config(
        create_app(settings, demo=args.demo),
        host=settings.host,
        port=settings.port,
        log_config=None,
        timeout_graceful_shutdown=30,
    )
    server = graceful_server(config)
    server.run()
    return 0 if server.started else 1


def graceful_server(config: Any) -> Any:
    """A uvicorn server whose SIGTERM/SIGINT end the process with status 0.

    uvicorn already shuts down gracefully (stops accepting, finishes in-flight requests,
    runs the lifespan shutdown that delivers every logged event); it then re-raises the
    signal, so the process would die "killed by SIGTERM". A service manager should see a
    clean exit instead.
    """
    import contextlib
    import signal
    import threading

    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self):  # type: ignore[no-untyped-def]
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            previous = {
                s: signal.signal(s, self.handle_exit) for s in (signal.SIGINT, signal.SIGTERM)
            }
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    return Server(config)
