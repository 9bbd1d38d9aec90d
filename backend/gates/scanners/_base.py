"""What every scanner adapter shares: the scan context, binary lookup, subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from backend.gates.targets import dockerfile_targets

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class ScanContext:
    """Everything a scanner needs about one temporary copy.

    Attributes:
        root: the temporary directory (scanners run with it as cwd).
        files: every file in it, relative and ``/``-separated.
        timeout_s: the limit for each subprocess.
        semgrep_bin: the semgrep executable, if found.
        semgrep_missing: why ``semgrep_bin`` is ``None`` (for the ``skipped`` detail).
    """

    root: Path
    files: tuple[str, ...]
    timeout_s: float = DEFAULT_TIMEOUT_S
    semgrep_bin: str | None = None
    semgrep_missing: str = "semgrep not installed"

    @cached_property
    def dockerfiles(self) -> list[str]:
        """The copy's Dockerfiles, by name or content (read once: three scanners ask)."""
        return dockerfile_targets(self.root, self.files)


class ToolMissing(Exception):
    """The executable is not installed; the adapter reports ``skipped``."""


class ToolFailed(Exception):
    """The tool did not finish or gave output that cannot be trusted; ``skipped``."""


def find_binary(name: str, *extra: Path) -> str | None:
    """Locate an executable: PATH, then beside this Python (an unactivated venv), then ``extra``."""
    found = shutil.which(name)
    if found:
        return found
    for candidate in (Path(sys.executable).parent / name, *extra):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def tool_env() -> dict[str, str]:
    """The environment for scanner subprocesses: offline and quiet."""
    env = dict(os.environ)
    env.update(
        {
            "SEMGREP_ENABLE_VERSION_CHECK": "0",
            "SEMGREP_SEND_METRICS": "off",
            "CHECKPOINT_DISABLE": "1",
            "TF_IN_AUTOMATION": "1",
            "TF_CLI_CONFIG_FILE": os.devnull,
            "NO_COLOR": "1",
        }
    )
    return env


def run_tool(cmd: Sequence[str], ctx: ScanContext) -> subprocess.CompletedProcess[str]:
    """Run one scanner command in the copy with the context's timeout.

    Raises:
        ToolFailed: the command timed out or could not be started.
    """
    try:
        return subprocess.run(
            list(cmd),
            cwd=ctx.root,
            env=tool_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=ctx.timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ToolFailed(f"{Path(cmd[0]).name} timed out after {ctx.timeout_s:g}s") from exc
    except OSError as exc:
        raise ToolFailed(f"{Path(cmd[0]).name} could not start: {exc}") from exc


def tail(text: str, limit: int = 300) -> str:
    """The end of a tool's stderr, for a ``skipped`` detail."""
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]
