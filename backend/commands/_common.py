"""Options every command shares."""

from __future__ import annotations

import argparse


def add_data_dir(parser: argparse.ArgumentParser) -> None:
    """Add ``--data-dir`` (default: the user's data directory or CADENCIA_DATA_DIR)."""
    parser.add_argument("--data-dir", default=None, help="state directory (default: user data dir)")


def add_database(parser: argparse.ArgumentParser, *, required: bool = False) -> None:
    """Add ``--database URL`` (sqlite:///FILE or postgresql://...)."""
    parser.add_argument(
        "--database",
        required=required,
        default=None,
        help="database URL: sqlite:///FILE or postgresql://user:pw@host/db",
    )
