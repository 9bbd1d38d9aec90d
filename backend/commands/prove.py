"""``cadencia prove``: Lab 87's proof harness."""

from __future__ import annotations

import argparse
from pathlib import Path

from backend.commands._common import add_data_dir


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "prove",
        help="replay a malformed-reasoning scenario against a design and count real debits",
    )
    p.add_argument("--arquitetura", required=True, choices=["minima", "producao"])
    p.add_argument("--cenario", required=True, type=Path, help="scenario JSONL")
    p.add_argument("--saida", required=True, type=Path, help="JSON array of attempt records")
    p.add_argument("--resumo", type=Path, default=None, help="JSON summary")
    p.add_argument("--database", default=None, help="use this database instead of a fresh one")
    p.add_argument("--ledger", default=None, help="use this ledger instead of the database")
    add_data_dir(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from backend.guard.prove import load_scenario, prove, write_json
    from backend.settings import load_settings

    console = Console()
    conversas = load_scenario(args.cenario)
    settings = None
    if args.database or args.ledger:
        settings = load_settings(
            data_dir=args.data_dir, database_url=args.database, ledger_url=args.ledger
        )
    with console.status(
        f"replaying {len(conversas)} conversations ({args.arquitetura})..."
    ) as status:
        result = prove(
            conversas,
            args.arquitetura,
            settings=settings,
            progress=lambda i, n: status.update(f"conversation {i}/{n} ({args.arquitetura})"),
        )
    write_json(args.saida, result.records)
    if args.resumo:
        write_json(args.resumo, result.summary)
    table = Table(title=f"cadencia prove — arquitetura {args.arquitetura}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for key, value in result.summary.items():
        style = "bold red" if key == "duplicate_debits" and value else ""
        table.add_row(key, f"[{style}]{value}[/]" if style else str(value))
    console.print(table)
    console.print(
        f"attempt records → {args.saida}" + (f", summary → {args.resumo}" if args.resumo else "")
    )
    return 0
