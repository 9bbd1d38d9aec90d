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
    p.add_argument(
        "--model",
        default=None,
        metavar="SPEC",
        help="send the customer turns to atendimento on this model instead of replaying the "
        "scenario's calls: chatty, openai:<model>[@<base_url>], bedrock:<modelId>",
    )
    add_data_dir(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from backend.guard.prove import Replay, load_scenario, prove, replay_scripted, write_json
    from backend.redact import redact_text
    from backend.settings import load_settings

    console = Console()
    conversas = load_scenario(args.cenario)
    settings = None
    if args.database or args.ledger:
        settings = load_settings(
            data_dir=args.data_dir, database_url=args.database, ledger_url=args.ledger
        )
    replay: Replay = replay_scripted
    if args.model:
        from backend.agents.prove_model import model_replay

        # Raises ConfigError (exit 2, one line) on a bad spec, before anything runs.
        replay = model_replay(args.model, settings or load_settings(data_dir=args.data_dir))
    # Printed (and often logged by CI): the spec's URL without its credentials.
    model = f", model {redact_text(args.model)}" if args.model else ""
    how = f"{args.arquitetura}{model}"
    with console.status(f"replaying {len(conversas)} conversations ({how})...") as status:
        result = prove(
            conversas,
            args.arquitetura,
            settings=settings,
            progress=lambda i, n: status.update(f"conversation {i}/{n} ({how})"),
            replay=replay,
        )
    write_json(args.saida, result.records)
    if args.resumo:
        write_json(args.resumo, result.summary)
    table = Table(title=f"cadencia prove — arquitetura {how}")
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
