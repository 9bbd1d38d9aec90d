"""What every scanner adapter shares: the scan context, binary lookup, subprocess."""

from __future__ import annotations

import os
import selectors
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from backend.gates.targets import dockerfile_targets

RULES_DIR = Path(__file__).resolve().parent.parent / "rules"
REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_TIMEOUT_S = 120.0
TOOL_MEMORY_BYTES = 1024**3
"""Address space (``RLIMIT_AS``) of a scanner process: detect-secrets expands a YAML alias
bomb as it parses, and without a limit it took 3 GB and the whole timeout."""
_LIMITED = (
    "import os, resource, sys\n"
    "limit = int(sys.argv[1])\n"
    "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)
"""Sets the limit and becomes the scanner: no ``preexec_fn``, which is unsafe when several
threads start processes at once, as the gate's scanners do."""


@dataclass(frozen=True)
class ScanContext:
    """Everything a scanner needs about one temporary copy.

    Attributes:
        root: the temporary directory (scanners run with it as cwd).
        files: every file in it, relative and ``/``-separated.
        timeout_s: the limit for each subprocess.
        semgrep_bin: the semgrep executable, if found.
        semgrep_missing: why ``semgrep_bin`` is ``None`` (for the ``skipped`` detail).
        reading: told the file (or directory) an in-process check starts parsing, so the
            sandbox can name the one that exceeded its limits.
    """

    root: Path
    files: tuple[str, ...]
    timeout_s: float = DEFAULT_TIMEOUT_S
    semgrep_bin: str | None = None
    semgrep_missing: str = "semgrep not installed"
    reading: Callable[[str], None] = field(default=lambda _rel: None, compare=False)

    @cached_property
    def dockerfiles(self) -> list[str]:
        """The copy's Dockerfiles, by name or content (read once: three scanners ask)."""
        return dockerfile_targets(self.root, self.files)


class ToolMissing(Exception):
    """The executable is not installed; the adapter reports ``skipped``."""


class ToolFailed(Exception):
    """The tool did not finish or gave output that cannot be trusted; ``skipped``."""


class TimedOut(ToolFailed):
    """The command was still running at the timeout and was killed."""


class OutputExceeded(ToolFailed):
    """The command printed more than its output limit and was killed."""


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


def run_tool(
    cmd: Sequence[str],
    ctx: ScanContext,
    *,
    stdin: str | None = None,
    max_output: int | None = None,
    memory_bytes: int | None = TOOL_MEMORY_BYTES,
) -> subprocess.CompletedProcess[str]:
    """Run one scanner command in the copy with the context's timeout.

    Args:
        cmd: the command; PR file names only after ``--`` or as ``./path``.
        ctx: the copy (the working directory) and the timeout.
        stdin: text for the command's standard input (none when omitted).
        max_output: most bytes kept from stdout and from stderr each; a command that
            prints more is killed (its report would not fit in the server's memory).
        memory_bytes: the command's address-space limit (``None``: none); one that needs
            more fails (Python's ``MemoryError``), which its adapter reports as ``skipped``.

    Raises:
        ToolFailed: the command could not be started; :class:`TimedOut` and
            :class:`OutputExceeded` for the two limits.
    """
    name = Path(cmd[0]).name
    argv = list(cmd)
    if memory_bytes is not None:
        argv = [sys.executable, "-I", "-S", "-c", _LIMITED, str(memory_bytes), *argv]
    try:
        proc = subprocess.Popen(
            argv,
            cwd=ctx.root,
            env=tool_env(),
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        raise ToolFailed(f"{name} could not start: {exc}") from exc
    with proc:
        try:
            out, err = _capture(proc, (stdin or "").encode(), ctx.timeout_s, max_output)
        except subprocess.TimeoutExpired as exc:
            raise TimedOut(f"{name} timed out after {ctx.timeout_s:g}s") from exc
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    if out is None or err is None:
        raise OutputExceeded(f"{name} printed more than {max_output} bytes")
    return subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        out.decode("utf-8", "replace"),
        err.decode("utf-8", "replace"),
    )


def _capture(
    proc: subprocess.Popen[bytes], data: bytes, timeout_s: float, limit: int | None
) -> tuple[bytes | None, bytes | None]:
    """Feed ``data`` to stdin and read stdout and stderr until both close; ``(None, None)``
    as soon as one passes ``limit`` bytes.

    Raises:
        subprocess.TimeoutExpired: the streams were still open after ``timeout_s``.
    """
    assert proc.stdout is not None
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout_s
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    sizes = {out_fd: 0, err_fd: 0}
    stdin_fd = proc.stdin.fileno() if proc.stdin is not None else None
    view = memoryview(data)
    with selectors.DefaultSelector() as selector:
        selector.register(out_fd, selectors.EVENT_READ)
        selector.register(err_fd, selectors.EVENT_READ)
        if stdin_fd is not None:
            selector.register(stdin_fd, selectors.EVENT_WRITE)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired(proc.args, timeout_s)
            for key, _ in selector.select(left):
                fd = key.fd
                if fd == stdin_fd:
                    try:
                        view = view[os.write(fd, view[:65536]) :]
                    except BrokenPipeError:
                        view = view[:0]
                    if not view:
                        selector.unregister(fd)
                        assert proc.stdin is not None
                        proc.stdin.close()
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    selector.unregister(fd)
                    continue
                chunks[fd].append(chunk)
                sizes[fd] += len(chunk)
                if limit is not None and sizes[fd] > limit:
                    return None, None
    proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    return b"".join(chunks[out_fd]), b"".join(chunks[err_fd])


def tail(text: str, limit: int = 300) -> str:
    """The end of a tool's stderr, for a ``skipped`` detail."""
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]
