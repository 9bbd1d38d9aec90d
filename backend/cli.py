"""The ``cadencia`` command line.

Each sub-command lives in its own module under :mod:`backend.commands` and exposes
``register(subparsers)``; this module only discovers them and dispatches, so adding a
command never means editing a shared file. Importing a command module must be cheap
(no I/O, no heavy imports at module level).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from backend import commands
from backend.exceptions import CadenciaError


def build_parser() -> argparse.ArgumentParser:
    """Build the parser with every command module found in :mod:`backend.commands`."""
    parser = argparse.ArgumentParser(
        prog="cadencia",
        description="Cadência Ops: run a team of AI agents from a terminal.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    if argv is None:  # the real process: mask a password given in argv
        from backend.store.credentials import scrub_process_title

        scrub_process_title()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except CadenciaError as exc:
        from rich.console import Console
        from rich.markup import escape

        # soft_wrap: a long path stays one line (copyable); the terminal wraps it.
        Console(stderr=True).print(f"[bold red]error:[/] {escape(exc.message)}", soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
