"""``cadencia up [--demo]``: the backend in-process plus the operator console — the main job."""

from __future__ import annotations

import argparse

from backend.commands._common import add_data_dir


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("up", help="start the backend in-process and open the operator console")
    p.add_argument("--demo", action="store_true", help="a sample project and team, live")
    p.add_argument("--readonly", action="store_true", help="watch only")
    p.add_argument("--operator", default=None, help="who actions are recorded as")
    p.add_argument("--bell", action="store_true", help="ring the bell on a new Inbox item")
    p.add_argument("--port", type=int, default=0, help="API port (default: any free port)")
    p.add_argument(
        "--headless-seconds",
        type=float,
        default=None,
        help="no console: run the backend this long, print a summary, exit (CI smoke)",
    )
    add_data_dir(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import socket
    import threading
    import time

    import uvicorn

    from backend import logs
    from backend.api.app import create_app
    from backend.core import resolve_token
    from backend.settings import load_settings

    settings = load_settings(data_dir=args.data_dir)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    log_path = settings.data_dir / "backend.log"
    # The console owns the terminal: the backend logs to a file in the data dir.
    logs.configure("INFO", stream=log_path.open("a", encoding="utf-8"))
    token, _ = resolve_token(settings)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings, demo=args.demo), log_config=None, timeout_graceful_shutdown=10
        )
    )
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="cadencia-backend"
    )
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    if not server.started:
        print(f"the backend did not start; see {log_path}")
        return 1
    try:
        if args.headless_seconds is not None:
            return _headless(url, token, args.headless_seconds)
        from console.app import run_console

        return run_console(
            url, token=token, readonly=args.readonly, operator=args.operator, bell=args.bell
        )
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _headless(url: str, token: str, seconds: float) -> int:
    import time

    import httpx

    from console.inert import inert

    def say(line: str) -> None:
        # Agent details, branches and reasons were written by models and customers.
        print(inert(line, multiline=False))

    time.sleep(seconds)
    with httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=10
    ) as http:
        roster = http.get("/api/roster").json()
        approvals = http.get("/api/approvals").json()
    say(f"backend at {url}")
    for agent in roster:
        say(f"  {agent['id']:<12} {agent['status']:<8} {agent['detail']}")
    for pr in approvals["infra_prs"]:
        say(
            f"  infra PR {pr['pr_action_id']} on {pr['branch']}: {pr['gate_status']} "
            f"({pr['gate_correction_count']} correction(s))"
        )
    for item in approvals["interruptions"]:
        say(
            f"  interruption {item['id']} in {item['conversation']} ({item['ferramenta']}, "
            f"{item['entidade']} {item['entidade_id']}): {item['motivo']}, "
            f"{item['attempt_count']} attempts"
        )
    return 0
