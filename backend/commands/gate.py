"""``cadencia gate DIR [--json]``: run the QA and SecOps gates on a directory.

Exit 0 on ``pass``, 1 on ``changes_requested``, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from backend.commands._common import add_data_dir


def register(subparsers: Any) -> None:
    """Add the ``gate`` command."""
    parser = subparsers.add_parser(
        "gate",
        help="run the QA + SecOps gates on a directory; exit 1 unless pass",
        description="Run the deterministic QA and SecOps gates on a copy of DIR.",
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
        Console(stderr=True).print(f"[bold red]error:[/] not a directory: {target}")
        return 2
    report = run_gates(target, load_settings(data_dir=args.data_dir))
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        from backend.gates.render import render_report

        render_report(report, Console())
    return 0 if report.verdict == "pass" else 1
