"""Data at rest (issue 16): the data dir 0700, the SQLite file and its companions 0600 on
creation whatever the umask, looser modes tightened on start with a warning, and a relative
``--data-dir`` resolved once so every file lands under it."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from backend.core import resolve_token
from backend.settings import load_settings
from backend.store.db import open_database
from backend.store.files import secure_data_dir
from backend.store.migrate import migrate


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def loose_umask() -> object:
    old = os.umask(0o022)  # the usual shell umask: without explicit modes, 0644 and 0755
    yield
    os.umask(old)


def test_a_fresh_data_dir_is_0700_and_the_database_and_token_0600(
    tmp_path: Path, loose_umask: object
) -> None:
    settings = load_settings(data_dir=tmp_path / "fresh" / "data")
    secure_data_dir(settings.data_dir)
    db = open_database(settings.resolved_database_url())
    try:
        migrate(db)
        with db.transaction() as tx:
            tx.execute_sql("SELECT 1")
        token, generated = resolve_token(settings)
        files = sorted(p.name for p in settings.data_dir.iterdir())
        assert generated
        assert token
        assert "cadencia.sqlite3-wal" in files
        assert "cadencia.sqlite3-shm" in files
        assert _mode(settings.data_dir) == 0o700
        for name in files:
            assert _mode(settings.data_dir / name) == 0o600, name
    finally:
        db.close()


def test_looser_modes_are_tightened_on_start_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "cadencia.sqlite3").write_bytes(b"")
    (data / "token").write_text("t\n")
    os.chmod(data, 0o755)
    os.chmod(data / "cadencia.sqlite3", 0o644)
    os.chmod(data / "token", 0o644)
    with caplog.at_level(logging.WARNING, logger="backend.store.files"):
        secure_data_dir(data)
    assert _mode(data) == 0o700
    assert _mode(data / "cadencia.sqlite3") == 0o600
    assert _mode(data / "token") == 0o600
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert "cadencia.sqlite3 was readable by other users (mode 644)" in warned
    assert "token was readable" in warned


def test_a_relative_data_dir_puts_the_database_under_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = load_settings(data_dir=Path("perfrel"))
    assert settings.data_dir == tmp_path / "perfrel"
    db = open_database(settings.resolved_database_url())
    try:
        migrate(db)
    finally:
        db.close()
    assert (tmp_path / "perfrel" / "cadencia.sqlite3").is_file()
    assert resolve_token(settings)[1]
    assert (tmp_path / "perfrel" / "token").is_file()
