"""``cadencia erp seed FILE.jsonl``: load orders and clients into the ERP.

The file's format is in :mod:`backend.erp.seed`; a bad line is named (``FILE:LINE``) and
nothing is loaded. With it, a deployment without ``--demo`` has customers to talk to.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from backend.commands._common import add_data_dir, add_database


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("erp", help="the ERP's orders and clients")
    inner = p.add_subparsers(dest="erp_command", metavar="ACTION", required=True)
    seed = inner.add_parser(
        "seed",
        help="load orders and clients from a JSONL file (one cliente or pedido a line)",
    )
    seed.add_argument("file", type=Path, help="FILE.jsonl")
    add_database(seed)
    add_data_dir(seed)
    seed.set_defaults(handler=erp_command)


def erp_command(args: argparse.Namespace) -> int:
    from rich.console import Console

    from backend.erp.seed import load_seed
    from backend.settings import load_settings
    from backend.store.db import open_database
    from backend.store.migrate import migrate

    settings = load_settings(data_dir=args.data_dir, database_url=args.database)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    db = open_database(settings.resolved_database_url())
    try:
        migrate(db)
        seeded = load_seed(db, args.file)
    finally:
        db.close()
    Console(stderr=True).print(
        f"loaded {seeded.clientes} cliente(s) and {seeded.pedidos} pedido(s) from {args.file}"
    )
    return 0
