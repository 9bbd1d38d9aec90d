"""Where the gates' scanners come from: the install, never a download at run time.

Every scanner is a dependency of the ``cadencia`` distribution (``pyproject.toml``), so
``pip install -e .`` puts semgrep, detect-secrets, hadolint and parliament beside the
Python that runs Cadência Ops. semgrep's own pins (OpenTelemetry, jsonschema...) resolve
together with FastAPI's and pydantic's since semgrep 1.185 (checked with ``pip install
--dry-run`` on a fresh venv), so it no longer needs a venv of its own. Nothing here
installs anything: a scanner that is not found is reported, with why, and the gate fails
closed (``cadencia gate`` exits 3).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from backend.gates.scanners._base import find_binary
from backend.settings import Settings, load_settings

SEMGREP_VERSION = "1.185.0"
"""The pinned semgrep of ``pyproject.toml`` (the shipped rules are tested against it)."""
REINSTALL = "reinstall Cadência Ops: pip install -e ."


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
    path that is wrong is an error, not a reason to pick another semgrep), else the semgrep
    installed with this Python, else one on PATH."""
    settings = settings or load_settings()
    if settings.semgrep_bin:
        configured = Path(settings.semgrep_bin)
        if configured.is_file():
            return Located(str(configured))
        return Located(None, f"semgrep not found at CADENCIA_SEMGREP_BIN={configured}")
    found = find_binary("semgrep")
    if found:
        return Located(found)
    return Located(None, f"semgrep not installed beside this Python nor on PATH; {REINSTALL}")


def resolve_semgrep(settings: Settings | None = None) -> str | None:
    """The semgrep to run, or ``None`` (see :func:`locate_semgrep` for the reason)."""
    return locate_semgrep(settings).path
