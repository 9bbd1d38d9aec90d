"""``cadencia projections rebuild``: rebuild the read models from the event log.

Safe while ``cadencia serve`` runs on the same database: the rebuild's writes and the
appends' upserts are commutative by event id, and the final swap applies the events
committed during the rebuild (see :mod:`backend.projections.rebuild`).
"""

from __future__ import annotations

import argparse

from backend.commands._common import add_data_dir, add_database


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("projections", help="read models kept from the event log")
    inner = p.add_subparsers(dest="projections_command", metavar="ACTION", required=True)
    rb = inner.add_parser(
        "rebuild",
        help="rebuild the roster projection and its time-travel snapshots from the log",
    )
    add_database(rb)
    add_data_dir(rb)
    rb.add_argument("--batch", type=int, default=5000, help="events read per batch (default 5000)")
    rb.set_defaults(handler=rebuild_command)


def rebuild_command(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    from backend.events import EventLog
    from backend.projections.rebuild import rebuild
    from backend.projections.roster_table import RosterProjection
    from backend.settings import load_settings
    from backend.store.db import open_database
    from backend.store.migrate import migrate

    settings = load_settings(data_dir=args.data_dir, database_url=args.database)
    console = Console()
    db = open_database(settings.resolved_database_url())
    try:
        migrate(db)
        events = EventLog(db)
        projection = RosterProjection(db, events, snapshot_every=settings.roster_snapshot_every)
        events.add_projector(projection.apply)
        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=console,
            disable=not console.is_terminal,
        ) as bar:
            task = bar.add_task("folding the event log", total=None)
            result = rebuild(
                projection,
                batch=max(args.batch, 1),
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
    finally:
        db.close()
    if result.started_from:
        console.print(
            f"the log's oldest events are archived: started from the snapshot at event "
            f"{result.started_from}",
            soft_wrap=True,
        )
    console.print(
        f"rebuilt {result.events} events into roster in {result.seconds:.2f} s "
        f"({result.facts} facts, {result.snapshots} snapshots, up to event {result.upto})",
        soft_wrap=True,  # one line, whatever the terminal's width: scripts read it
    )
    return 0
