"""``cadencia ledger``: maintenance of the idempotency ledger."""

from __future__ import annotations

import argparse

from backend.commands._common import add_data_dir


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("ledger", help="idempotency ledger maintenance")
    inner = p.add_subparsers(dest="ledger_command", metavar="ACTION", required=True)
    rec = inner.add_parser(
        "reconcile",
        help="settle resultado_incerto refunds by asking the gateway by idempotency key",
    )
    rec.add_argument("--database", default=None)
    rec.add_argument("--ledger", default=None)
    add_data_dir(rec)
    rec.set_defaults(handler=reconcile)


def reconcile(args: argparse.Namespace) -> int:
    from rich.console import Console

    from backend.guard.service import build_guard
    from backend.settings import load_settings

    settings = load_settings(
        data_dir=args.data_dir, database_url=args.database, ledger_url=args.ledger
    )
    console = Console()
    if settings.gateway_url is None:
        console.print("[yellow]no CADENCIA_GATEWAY_URL: asking the local gateway simulator[/]")
    guard = build_guard(settings)
    try:
        settled = guard.orchestrator.reconcile()
    finally:
        guard.close()
    if not settled:
        console.print("nothing to reconcile")
    for chave, status in settled:
        console.print(f"{chave}: {status}")
    return 0
