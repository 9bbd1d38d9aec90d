"""Files at rest: the data dir is 0700, the database, its WAL/SHM and the token are 0600.

They hold conversations, customers' names, addresses and phones, the ledger and the API
token, so no other local user may read them. Created with those modes (``os.open`` with a
mode, not the process umask, so a caller's ``umask 022`` cannot widen them); on every
start a looser mode found on an existing file is tightened and logged as a warning (an
older version created the SQLite file 0644 in a 0755 directory).
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600
SQLITE_SUFFIXES = ("", "-wal", "-shm", "-journal")
"""SQLite's own files next to the database (WAL mode creates ``-wal`` and ``-shm`` with the
database file's mode, so a 0600 database gets 0600 companions)."""


def tighten(path: Path, mode: int) -> bool:
    """Give ``path`` at most ``mode`` (no bit for group/others); warn when it had more.

    Returns True when the mode had to change. A missing file is fine (nothing to protect).
    """
    try:
        current = stat.S_IMODE(path.lstat().st_mode)
    except FileNotFoundError:
        return False
    if path.is_symlink() or not current & 0o077:
        return False
    os.chmod(path, mode)
    log.warning("%s was readable by other users (mode %o): set to %o", path, current, mode)
    return True


def private_dir(path: Path) -> Path:
    """Create ``path`` (and missing parents) with the directory itself 0700, or tighten it."""
    if not path.exists():
        path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
        os.chmod(path, DIR_MODE)  # mkdir's mode is filtered through the umask
    else:
        tighten(path, DIR_MODE)
    return path


def private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 if it does not exist, else tighten it."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        tighten(path, FILE_MODE)
        return
    os.close(fd)


def secure_sqlite(path: Path) -> None:
    """The SQLite file (created 0600 before SQLite opens it) and its companions tightened."""
    private_file(path)
    for suffix in SQLITE_SUFFIXES[1:]:
        tighten(path.with_name(path.name + suffix), FILE_MODE)


def secure_data_dir(data_dir: Path) -> Path:
    """The data dir 0700 and every file cadencia keeps in it at most 0600 (fixed on start)."""
    private_dir(data_dir)
    for child in data_dir.iterdir():
        if child.is_symlink():
            continue
        if child.is_dir():
            if child.name == "secrets":
                tighten(child, DIR_MODE)
            continue
        tighten(child, FILE_MODE)
    return data_dir
