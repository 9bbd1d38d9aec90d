"""One-time installation of semgrep into the data dir, for machines that only ran
``pip install -e .``.

semgrep pins dependency versions (OpenTelemetry, jsonschema) that clash with FastAPI's, so
it cannot be a dependency of the ``cadencia`` distribution; it lives in a venv of its own.
The test set-up puts one in ``.venv-tools/``; a user's first ``cadencia up`` makes one in
``<data_dir>/tools/semgrep`` with pip, from the same package index pip already uses.
"""

from __future__ import annotations

import logging
import subprocess
import threading
import venv
from pathlib import Path

from backend.exceptions import ScannerError
from backend.gates.scanners._base import REPO_ROOT, find_binary
from backend.settings import Settings, load_settings

log = logging.getLogger(__name__)

SEMGREP_VERSION = "1.185.0"
_lock = threading.Lock()


def provisioned_semgrep(data_dir: Path) -> Path:
    """Where the data dir's own semgrep lives (whether or not it is installed yet)."""
    return data_dir / "tools" / "semgrep" / "bin" / "semgrep"


def resolve_semgrep(settings: Settings | None = None) -> str | None:
    """The semgrep to run, or None: ``Settings.semgrep_bin`` / ``CADENCIA_SEMGREP_BIN``, else
    PATH, else ``<repo>/.venv-tools`` (the test set-up), else the data dir's own install."""
    settings = settings or load_settings()
    if settings.semgrep_bin:
        return settings.semgrep_bin if Path(settings.semgrep_bin).is_file() else None
    found = find_binary("semgrep", REPO_ROOT / ".venv-tools" / "bin" / "semgrep")
    if found:
        return found
    own = provisioned_semgrep(settings.data_dir)
    return str(own) if own.is_file() else None


def ensure_semgrep(settings: Settings, *, timeout_s: float = 900.0) -> str:
    """Return a semgrep executable, installing one into the data dir if none is found.

    Raises:
        ScannerError: the installation failed (no package index, no disk...).
    """
    found = resolve_semgrep(settings)
    if found:
        return found
    target = provisioned_semgrep(settings.data_dir)
    with _lock:
        if not target.is_file():
            env_dir = target.parent.parent
            log.info("installing semgrep %s into %s (one time)", SEMGREP_VERSION, env_dir)
            venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
            pip = [
                str(env_dir / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                f"semgrep=={SEMGREP_VERSION}",
            ]
            try:
                subprocess.run(pip, check=True, capture_output=True, text=True, timeout=timeout_s)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
                detail = getattr(exc, "stderr", "") or str(exc)
                raise ScannerError(f"could not install semgrep: {detail[-500:]}") from exc
    settings.semgrep_bin = str(target)
    return str(target)
