"""``cadencia gate DIR [--json]``: run the QA and SecOps gates on a directory.

Exit codes (README "Scanners and exit codes"): 0 ``pass``; 1 ``changes_requested`` on
findings; 2 bad input; 3 incomplete: a scanner that had something to look at could not run
(not installed, timed out, unreadable output) — the verdict is ``changes_requested`` and
the report says which scanner and why. 3 wins over 1: until every scanner ran, the
findings are not the whole story.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from backend.commands._common import add_data_dir

EXIT_INCOMPLETE = 3
"""A scanner could not run: the gate failed closed (never a pass)."""


def register(subparsers: Any) -> None:
    """Add the ``gate`` command."""
    parser = subparsers.add_parser(
        "gate",
        help="run the QA + SecOps gates on a directory; exit 1 unless pass",
        description=(
            "Run the deterministic QA and SecOps gates on a copy of DIR. Exit 0 pass, "
            "1 changes requested, 2 bad input, 3 a scanner could not run (see the report)."
        ),
    )
    parser.add_argument("dir", metavar="DIR", help="directory to scan")
    parser.add_argument("--json", action="store_true", help="print the gate report as JSON")
    add_data_dir(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the gates and print the report; return the exit code."""
    from rich.console import Console

    from backend.gates.runner import run_gates
    from backend.settings import load_settings

    target = Path(args.dir)
    if not target.is_dir():
        Console(stderr=True).print(f"[bold red]error:[/] not a directory: {target}", soft_wrap=True)
        return 2
    report = run_gates(target, load_settings(data_dir=args.data_dir))
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        from backend.gates.render import render_report

        render_report(report, Console())
    if not report.complete:
        return EXIT_INCOMPLETE
    return 0 if report.verdict == "pass" else 1
