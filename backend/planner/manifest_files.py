"""Read a repository's manifests leniently: a broken manifest is empty, never a crash.

The planner reads repositories it did not write; one malformed ``package.json`` must not
stop the plan of every other module.
"""

from __future__ import annotations

import tomllib
from pathlib import Path


def read_text(path: Path) -> str:
    """The file's text (undecodable bytes replaced), or ``""`` when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def read_toml(path: Path) -> dict:
    """The TOML table, or ``{}`` when missing or invalid."""
    try:
        return tomllib.loads(read_text(path)) if path.is_file() else {}
    except tomllib.TOMLDecodeError:
        return {}
