"""Where the gates' scanners come from: the install step, never a download at run time.

detect-secrets, hadolint and parliament are dependencies of the ``cadencia`` distribution.
semgrep cannot be one (its pins would hold FastAPI back): it gets a venv of its own in the
tools directory, created by ONE documented step, ``cadencia tools install``. Why and the
figures: docs/decisions/0010-semgrep-in-its-own-venv.md. Nothing in the gate path installs
anything: a scanner that is not found is reported with why, and the gate fails closed
(``cadencia gate`` exits 3).
"""

from __future__ import annotations

import os
import subprocess
import venv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_data_path

from backend.exceptions import ScannerError
from backend.gates.scanners._base import find_binary, tool_env
from backend.settings import Settings, load_settings

SEMGREP_VERSION = "1.185.0"
"""The semgrep the shipped rules are tested against (``cadencia tools install`` puts it)."""
INSTALL_HINT = "run: cadencia tools install"


def tools_dir() -> Path:
    """Where ``cadencia tools install`` puts the scanners that cannot be dependencies."""
    configured = os.environ.get("CADENCIA_TOOLS_DIR")
    return Path(configured) if configured else user_data_path("cadencia") / "tools"


def provisioned_semgrep() -> Path:
    """The tools directory's semgrep (whether or not it is installed yet)."""
    return tools_dir() / "semgrep" / "bin" / "semgrep"


@dataclass(frozen=True)
class Located:
    """The outcome of looking for one scanner.

    Attributes:
        path: the executable, or ``None`` when it was not found.
        reason: why it was not found (what was looked at, what to do); ``None`` if found.
    """

    path: str | None
    reason: str | None = None


def locate_semgrep(settings: Settings | None = None) -> Located:
    """``Settings.semgrep_bin`` / ``CADENCIA_SEMGREP_BIN`` if set (and only it: a configured
    path that is wrong is an error, not a reason to pick another semgrep), else the tools
    directory's, else one beside this Python or on PATH."""
    settings = settings or load_settings()
    if settings.semgrep_bin:
        configured = Path(settings.semgrep_bin)
        if configured.is_file():
            return Located(str(configured))
        return Located(None, f"semgrep not found at CADENCIA_SEMGREP_BIN={configured}")
    own = provisioned_semgrep()
    if own.is_file():
        return Located(str(own))
    found = find_binary("semgrep")
    if found:
        return Located(found)
    return Located(None, f"semgrep not installed (not in {own.parent.parent}); {INSTALL_HINT}")


def resolve_semgrep(settings: Settings | None = None) -> str | None:
    """The semgrep to run, or ``None`` (see :func:`locate_semgrep` for the reason)."""
    return locate_semgrep(settings).path


def installed_version(binary: Path) -> str | None:
    """``semgrep --version`` of ``binary``, or ``None`` when it does not answer."""
    try:
        proc = subprocess.run(
            # tool_env: without SEMGREP_ENABLE_VERSION_CHECK=0 semgrep waits on the network
            [str(binary), "--version"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=tool_env(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def install_semgrep(progress: Callable[[str], None], *, timeout_s: float = 1800.0) -> Path:
    """Create (or repair) the tools directory's semgrep venv; idempotent.

    A venv whose semgrep already answers ``SEMGREP_VERSION`` is left alone. pip's own
    progress lines are passed to ``progress`` as they come (the wheel is ~100 MB).

    Raises:
        ScannerError: the venv or pip failed (no package index, no disk...).
    """
    target = provisioned_semgrep()
    env_dir = target.parent.parent
    if target.is_file() and installed_version(target) == SEMGREP_VERSION:
        progress(f"semgrep {SEMGREP_VERSION} already installed in {env_dir}")
        return target
    progress(f"creating the venv {env_dir}")
    try:
        venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ScannerError(f"could not create {env_dir}: {exc}") from exc
    progress(f"installing semgrep=={SEMGREP_VERSION} with pip (about 300 MB on disk)")
    cmd = [
        str(env_dir / "bin" / "python"),
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--progress-bar=off",
        f"semgrep=={SEMGREP_VERSION}",
    ]
    tail: list[str] = []
    # The venv's pip must see only the venv: a PYTHONPATH (a checkout, another venv) would
    # make it count packages found there as installed and leave them out.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    try:
        with subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        ) as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                line = line.rstrip()
                if line and not line.startswith("WARNING: Location"):
                    progress(line)
                    tail = [*tail[-9:], line]
            code = proc.wait(timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ScannerError(f"could not install semgrep: {exc}") from exc
    if code != 0:
        raise ScannerError(f"pip could not install semgrep (exit {code}): {' | '.join(tail)}")
    version = installed_version(target)
    if version != SEMGREP_VERSION:
        raise ScannerError(f"installed semgrep answers {version!r}, not {SEMGREP_VERSION}")
    progress(f"semgrep {SEMGREP_VERSION} ready: {target}")
    return target
