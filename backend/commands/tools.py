"""``cadencia tools install``: put the scanners that cannot be dependencies in place.

Part of the install (the README's install line runs it): the gates never download
anything at run time. Idempotent; prints pip's progress. Exit 0 when every scanner is in
place, 1 when the installation failed. ``cadencia tools status`` says where each one is.
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    """Add ``tools install`` and ``tools status``."""
    parser = subparsers.add_parser(
        "tools", help="install / show the gates' scanners (semgrep's own venv)"
    )
    sub = parser.add_subparsers(dest="tools_command", required=True)
    install = sub.add_parser("install", help="create the semgrep venv (idempotent, shows progress)")
    install.set_defaults(handler=run_install)
    status = sub.add_parser("status", help="where each scanner is; exit 3 if one is missing")
    status.set_defaults(handler=run_status)


def run_install(args: argparse.Namespace) -> int:
    """Install semgrep into the tools directory; report what really happened."""
    from backend.exceptions import ScannerError
    from backend.gates.provision import install_semgrep

    try:
        install_semgrep(lambda line: print(line, flush=True))
    except ScannerError as exc:
        print(f"error: {exc}", flush=True)
        return 1
    return 0


def run_status(args: argparse.Namespace) -> int:
    """Print each scanner's location (or why it is missing)."""
    from backend.commands.gate import EXIT_INCOMPLETE
    from backend.gates.provision import locate_semgrep
    from backend.gates.scanners import parliament
    from backend.gates.scanners._base import find_binary

    semgrep = locate_semgrep()
    found: dict[str, str | None] = {
        "semgrep": semgrep.path or semgrep.reason,
        "detect-secrets": find_binary("detect-secrets"),
        "hadolint": find_binary("hadolint"),
        "parliament": "importable" if parliament.available() else None,
    }
    missing = semgrep.path is None
    for name, where in found.items():
        if where is None:
            missing = True
        print(f"{name:<15} {where or 'not installed (pip install -e .)'}")
    return EXIT_INCOMPLETE if missing else 0
