"""Database passwords off the command line (issue 16): from a file, the environment or
libpq's PGPASSFILE; one given in argv anyway is masked in ``/proc/PID/cmdline``."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from backend.cli import main


def _without_password(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    assert parts.password
    netloc = f"{parts.username}@{parts.hostname}:{parts.port or 5432}"
    return urlunsplit(parts._replace(netloc=netloc)), parts.password


def test_the_password_comes_from_a_file_or_pgpassfile(
    pg_url: str, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, password = _without_password(pg_url)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    secret = tmp_path / "db-password"
    secret.write_text(password + "\n")
    monkeypatch.setenv("CADENCIA_DATABASE_PASSWORD_FILE", str(secret))
    assert main(["db", "migrate", "--database", bare, "--data-dir", str(data_dir)]) == 0

    monkeypatch.delenv("CADENCIA_DATABASE_PASSWORD_FILE")
    parts = urlsplit(bare)
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"{parts.hostname}:{parts.port}:*:{parts.username}:{password}\n")
    pgpass.chmod(0o600)  # libpq ignores a password file others can read
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    assert main(["audit", "grants", "--database", bare, "--this-database-only"]) == 0


def test_a_password_in_argv_is_masked_in_the_process_title(pg_url: str, data_dir: Path) -> None:
    _, password = _without_password(pg_url)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "backend.cli",
            "serve",
            "--database",
            pg_url,
            "--data-dir",
            str(data_dir),
            "--port",
            "0",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    cmdline = Path(f"/proc/{proc.pid}/cmdline")
    try:
        deadline = time.monotonic() + 30
        while "--database" not in (seen := cmdline.read_bytes().decode()) or password in seen:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, f"still in the title: {seen!r}"
            time.sleep(0.01)
        assert "*" * len(password) in seen
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "a database password was given on the command line" in err
