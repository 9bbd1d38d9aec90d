"""``cadencia operators add NAME --role channel|viewer|operator|admin | list | revoke NAME``.

A ``channel`` account is a customer channel's token: it may only post customer messages.
``add`` prints the new token once (only its salted hash is stored: it cannot be shown
again; revoke and add the name again to replace it). ``revoke`` takes effect on the next
request, in every backend process sharing the database.
"""

from __future__ import annotations

import argparse

from backend.commands._common import add_data_dir, add_database
from backend.operators.roles import ROLES


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("operators", help="named operator accounts and their roles")
    inner = p.add_subparsers(dest="operators_command", metavar="ACTION", required=True)
    add = inner.add_parser("add", help="add an operator and print its token (shown once)")
    add.add_argument("name")
    add.add_argument("--role", required=True, choices=ROLES)
    listing = inner.add_parser("list", help="every operator, revoked ones included")
    listing.add_argument("--json", action="store_true", help="print JSON")
    revoke = inner.add_parser("revoke", help="revoke an operator's token (at once)")
    revoke.add_argument("name")
    for parser in (add, listing, revoke):
        add_database(parser)
        add_data_dir(parser)
        parser.set_defaults(handler=operators_command)


def operators_command(args: argparse.Namespace) -> int:
    import json

    from rich.console import Console
    from rich.table import Table

    from backend.operators.accounts import Operators
    from backend.settings import load_settings
    from backend.store.db import open_database
    from backend.store.migrate import migrate

    settings = load_settings(data_dir=args.data_dir, database_url=args.database)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    console = Console(stderr=True)
    db = open_database(settings.resolved_database_url())
    try:
        migrate(db)
        accounts = Operators(db)
        if args.operators_command == "add":
            account, token = accounts.add(args.name, args.role)
            console.print(
                f"operator [bold]{account.name}[/] ({account.role}) added; its token, shown "
                "only now:"
            )
            print(token)
        elif args.operators_command == "revoke":
            accounts.revoke(args.name)
            console.print(f"operator [bold]{args.name}[/] revoked: its token is refused")
        elif args.json:
            print(json.dumps([a.to_dict() for a in accounts.list()], indent=2))
        else:
            table = Table("name", "role", "id", "created", "revoked")
            for a in accounts.list():
                table.add_row(a.name, a.role, a.id, a.created_at, a.revoked_at or "")
            Console().print(table)
    finally:
        db.close()
    return 0
