"""``cadencia events archive`` / ``restore``: retention of the event log.

``archive --before YYYY-MM-DD --out FILE.jsonl.gz`` moves events older than the date (that
live state no longer reads) to a gzip'd JSON-lines file; ``restore FILE`` puts them back.
Bad input (a malformed or future date, an existing ``--out``, a missing or corrupt archive)
is an error with exit status 2 and changes nothing. See :mod:`backend.events.archive`.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.commands._common import add_data_dir, add_database

if TYPE_CHECKING:
    from backend.events import EventLog


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``events`` with its ``archive`` and ``restore`` sub-commands."""
    parser = sub.add_parser("events", help="event log retention (archive, restore)")
    esub = parser.add_subparsers(dest="events_command", metavar="ACTION", required=True)
    a = esub.add_parser(
        "archive",
        help="move events before a date to a .jsonl.gz file",
        description="Move events with a timestamp before DATE (00:00 UTC) to a gzip'd "
        "JSON-lines file, then delete them from the log. Events live state still reads "
        "(open sessions and conversations, the newest event the roster folds to) stay. "
        "Projections, the ledger and every other table are untouched.",
    )
    a.add_argument("--before", required=True, metavar="YYYY-MM-DD", help="archive older events")
    a.add_argument("--out", required=True, type=Path, metavar="FILE.jsonl.gz", help="new file")
    add_database(a)
    add_data_dir(a)
    a.set_defaults(handler=run_archive)
    r = esub.add_parser(
        "restore",
        help="put an archive's events back with their ids",
        description="Check every line of FILE, then insert its events with their ids, "
        "skipping ids already in the log (running it twice changes nothing).",
    )
    r.add_argument("file", type=Path, metavar="FILE.jsonl.gz")
    add_database(r)
    add_data_dir(r)
    r.set_defaults(handler=run_restore)


@contextmanager
def _log(args: argparse.Namespace) -> Iterator[EventLog]:
    from backend.events import EventLog
    from backend.settings import load_settings
    from backend.store.db import open_database
    from backend.store.migrate import migrate

    settings = load_settings(data_dir=args.data_dir, database_url=args.database)
    db = open_database(settings.resolved_database_url())
    try:
        migrate(db)
        yield EventLog(db)
    finally:
        db.close()


@contextmanager
def _progress() -> Iterator[Callable[[str, int, int | None], None]]:
    """A rich bar per phase on a TTY; nothing otherwise (the summary line always prints)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        yield lambda *_: None
        return
    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        transient=True,
    )
    tasks: dict[str, Any] = {}

    def tell(phase: str, done: int, total: int | None) -> None:
        if phase not in tasks:
            tasks[phase] = bar.add_task(phase, total=total)
        bar.update(tasks[phase], completed=done, total=total)

    with bar:
        yield tell


def run_archive(args: argparse.Namespace) -> int:
    """``cadencia events archive``."""
    from rich.console import Console

    from backend.events.archive import archive, parse_before
    from backend.events.archive_file import check_new_path

    day = parse_before(args.before)
    check_new_path(args.out)  # before opening the database: a bad --out changes nothing
    started = time.perf_counter()
    with _log(args) as log, _progress() as tell:
        result = archive(log, day, args.out, progress=tell)
    seconds = time.perf_counter() - started
    console = Console(highlight=False, soft_wrap=True)
    if result.path is None:
        console.print(
            f"nothing to archive before {day} ({result.kept} older events kept: live state "
            f"reads them); no file written"
        )
        return 0
    console.print(
        f"archived {result.archived} events (ids {result.first_id}–{result.last_id}) before "
        f"{day} to {result.path} in {seconds:.1f} s; {result.kept} older events kept "
        "(live state reads them)"
    )
    return 0


def run_restore(args: argparse.Namespace) -> int:
    """``cadencia events restore``."""
    from rich.console import Console

    from backend.events.archive import restore
    from backend.events.archive_file import check_archive_path

    check_archive_path(args.file)
    started = time.perf_counter()
    with _log(args) as log, _progress() as tell:
        result = restore(log, args.file, progress=tell)
    seconds = time.perf_counter() - started
    Console(highlight=False, soft_wrap=True).print(
        f"restored {result.restored} events from {result.path} in {seconds:.1f} s; "
        f"{result.skipped} already in the log"
    )
    return 0
