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
    """Ask the gateway about every uncertain claim, as the person running the command.

    Each ask is in the audit (``GET /api/audit``). A claim that went to another gateway than
    the one configured here is refused (nothing recorded) and the exit status is 1.
    """
    from rich.console import Console
    from rich.markup import escape

    from backend.guard.assembly import build_guard
    from backend.guard.uncertain import CLI, Settled
    from backend.settings import load_settings

    settings = load_settings(
        data_dir=args.data_dir, database_url=args.database, ledger_url=args.ledger
    )
    console = Console()
    guard = build_guard(settings)
    try:
        uncertain = guard.orchestrator.uncertain
        if uncertain is None:
            console.print("this backend runs without a ledger: nothing to reconcile")
            return 0
        console.print(f"asking gateway {escape(uncertain.toolbox.gateway_identity)}")
        results = uncertain.reconcile_each(by=_who(), origin=CLI)
    finally:
        guard.close()
    if not results:
        console.print("nothing to reconcile")
    refused = False
    for chave, got in results:
        if isinstance(got, Settled):
            line = got.status if got.settled else f"{got.status} ({got.message})"
            console.print(f"{escape(chave)}: {escape(line)}")
        else:
            refused = True
            console.print(f"[red]{escape(chave)}: not asked: {escape(got.message)}[/]")
    return 1 if refused else 0


def _who() -> str:
    """Who ran the command, as the audit names them (the OS user, marked as the CLI)."""
    import getpass

    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@cli"
