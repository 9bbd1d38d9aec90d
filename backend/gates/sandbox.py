"""The gate's own parsers run out of the server process, under limits.

The built-in checks parse what a PR wrote (compose YAML, Dockerfiles, IAM JSON, YAML and
HCL), and a few hundred bytes of YAML aliases expand to gigabytes. So each check runs in a
child interpreter that limits its own CPU time and address space before it reads anything
(:func:`run_sandboxed` gives the protocol). A check that hits a limit is a blocking
``exceeded-limits`` finding on the file it was reading: what the gate could not read is not
a pass. Any other failure is ``skipped``.
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.gates.findings import Finding, ScanResult
from backend.gates.scanners._base import (
    DEFAULT_TIMEOUT_S,
    OutputExceeded,
    ScanContext,
    TimedOut,
    ToolFailed,
    run_tool,
    tail,
)

RULE = "exceeded-limits"
CHECKS: dict[str, str] = {
    "compose": "backend.gates.scanners.compose",
    "dockerfile": "backend.gates.scanners.dockerfile",
    "iam-floor": "backend.gates.scanners.iam_floor",
    "kubernetes": "backend.gates.scanners.kubernetes",
}
"""Each check's tool name and module (with ``targets`` and ``scan``). The child imports only
the module of the check it runs: all three cost about 0.45 s of start-up, one 0.1-0.3 s."""
_EXIT_MEMORY = 86
_EXIT_NESTING = 87


@dataclass(frozen=True)
class Limits:
    """What one sandboxed check may use.

    Attributes:
        cpu_s: CPU seconds (``RLIMIT_CPU``) at the default scanner timeout; they grow
            with the tree as the timeout does. The wall-clock limit is the timeout.
        memory_bytes: address space (``RLIMIT_AS``): the interpreter, its imports and
            parliament's IAM catalogue need about 150 MB of it.
        output_bytes: most the child may print on stdout and on stderr each.
    """

    cpu_s: int = 30
    memory_bytes: int = 512 * 1024 * 1024
    output_bytes: int = 16 * 1024 * 1024


LIMITS = Limits()


def sandboxed(tool: str, limits: Limits = LIMITS) -> Callable[[ScanContext], ScanResult | None]:
    """The in-process check ``tool`` as a scanner that runs it in a limited child."""

    def scan(ctx: ScanContext) -> ScanResult | None:
        return run_sandboxed(tool, ctx, limits)

    return scan


def run_sandboxed(tool: str, ctx: ScanContext, limits: Limits = LIMITS) -> ScanResult | None:
    """Run the check ``tool`` on the copy in a child under ``limits``.

    The child is ``python -P -m backend.gates.sandbox TOOL CPU_S BYTES``, started through the
    scanners' own :func:`~backend.gates.scanners._base.run_tool` (wall-clock timeout, output
    cap); it sets ``RLIMIT_CPU`` and ``RLIMIT_AS`` before it reads anything. ``-P``: the child
    runs in the PR's copy, whose ``yaml.py`` must not be imported. File names go in on stdin,
    never argv. The child prints ``{"reading": file}`` as each file starts and
    ``{"result": ...}`` at the end.

    Returns:
        The check's result; ``None`` when nothing in the copy concerns it; ``fail`` with
        an ``exceeded-limits`` finding when the child hit a limit; ``skipped`` when it
        failed otherwise.
    """
    if not _check(tool, "targets")(ctx):
        return None
    cpu_s = max(1, int(limits.cpu_s * ctx.timeout_s / DEFAULT_TIMEOUT_S))
    cmd = [
        sys.executable,
        "-P",
        "-m",
        "backend.gates.sandbox",
        tool,
        str(cpu_s),
        str(limits.memory_bytes),
    ]
    request = json.dumps({"files": list(ctx.files), "timeout_s": ctx.timeout_s})
    try:
        # the child sets its own RLIMIT_AS, with the check's figure
        proc = run_tool(cmd, ctx, stdin=request, max_output=limits.output_bytes, memory_bytes=None)
    except OutputExceeded:
        return _exceeded(tool, "", f"more than {limits.output_bytes} bytes of output")
    except TimedOut:
        return _exceeded(tool, "", f"more than {ctx.timeout_s:g}s of wall-clock time")
    except ToolFailed as exc:
        return ScanResult.skipped(tool, str(exc))
    reading, result = _parse(proc.stdout)
    code = proc.returncode
    if code == _EXIT_MEMORY:
        return _exceeded(tool, reading, f"more than {limits.memory_bytes >> 20} MiB of memory")
    if code == _EXIT_NESTING:
        return _exceeded(tool, reading, "nesting deeper than the parser's stack")
    if code < 0:
        why = f"{cpu_s}s of CPU" if -code in (signal.SIGXCPU, signal.SIGKILL) else "its limits"
        return _exceeded(tool, reading, f"more than {why} ({signal.Signals(-code).name})")
    if code != 0 or result is None:
        return ScanResult.skipped(tool, f"{tool} check failed (exit {code}): {tail(proc.stderr)}")
    return result


def _parse(stdout: str) -> tuple[str, ScanResult | None]:
    """The last file the child started reading, and its result if it printed one."""
    reading, result = "", None
    for line in stdout.splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and isinstance(item.get("reading"), str):
            reading = item["reading"]
        elif isinstance(item, dict) and "result" in item:
            result = _result(item["result"])
    return reading, result


def _result(data: dict[str, object] | None) -> ScanResult | None:
    if data is None:
        return None
    findings = data.get("findings")
    return ScanResult(
        tool=str(data["tool"]),
        status=data["status"],  # type: ignore[arg-type]
        findings=tuple(
            Finding(
                file=f["file"],
                line=f["line"],
                tool=f["tool"],
                rule=f["rule"],
                severity=f["severity"],
                message=f["message"],
            )
            for f in (findings if isinstance(findings, list) else [])
        ),
        detail=data.get("detail"),  # type: ignore[arg-type]
    )


def _exceeded(tool: str, file: str, what: str) -> ScanResult:
    where = f"reading {file}" if file else "reading this PR"
    return ScanResult.from_findings(
        tool,
        [
            Finding(
                file=file,
                line=None,
                tool=tool,
                rule=RULE,
                severity="error",
                message=f"the {tool} check exceeded its limits {where} ({what}): the gate "
                "cannot vouch for it; simplify the file (no alias bombs, no huge documents)",
            )
        ],
    )


def _say_reading(rel: str) -> None:
    sys.stdout.write(json.dumps({"reading": rel}) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    """The child: limit itself, read the file list from stdin, run one check, print it."""
    tool, cpu_s, memory_bytes = argv[0], int(argv[1]), int(argv[2])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    request = json.load(sys.stdin)
    ctx = ScanContext(
        root=Path.cwd(),
        files=tuple(request["files"]),
        timeout_s=float(request["timeout_s"]),
        reading=_say_reading,
    )
    try:
        result = _check(tool, "scan")(ctx)
        out = None if result is None else _result_json(result)
        sys.stdout.write(json.dumps({"result": out}) + "\n")
        sys.stdout.flush()
    except MemoryError:
        os._exit(_EXIT_MEMORY)  # no cleanup: there is no memory left to run it
    except RecursionError:
        os._exit(_EXIT_NESTING)
    return 0


def _check(tool: str, attr: str) -> Callable[[ScanContext], Any]:
    """The check's ``targets`` or ``scan`` function, importing its module on first use."""
    function: Callable[[ScanContext], Any] = getattr(importlib.import_module(CHECKS[tool]), attr)
    return function


def _result_json(result: ScanResult) -> dict[str, object]:
    return {
        "tool": result.tool,
        "status": result.status,
        "detail": result.detail,
        "findings": [f.to_json() for f in result.findings],
    }


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
