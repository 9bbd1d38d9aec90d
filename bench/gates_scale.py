"""The gate on a large tree vs its scanners run directly: ``python -m bench.gates_scale``.

Builds a clean tree of ``--files`` small source files (Python, JavaScript, Markdown, YAML,
a few Dockerfiles and workflows: what a monorepo PR touching everything looks like), then
times, side by side on the same tree, ``run_gates`` (copy, suppression strip, every
scanner in parallel, parsing) and the scanners' own command lines run directly (the
adapters' ``command()``, run concurrently as the gate runs them). A verdict other than ``pass`` or
a skipped scanner is printed too: the figure only counts if the gate really looked.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.table import Table

from backend.gates.provision import resolve_semgrep
from backend.gates.runner import run_gates
from backend.gates.scanners import detect_secrets, hadolint, semgrep
from backend.gates.scanners._base import find_binary, tool_env
from backend.gates.targets import is_dockerfile

_PY = '''\
"""Module {i}: order totals for shard {i}."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Line{i}:
    sku: str
    quantity: int
    unit_cents: int

    def total(self) -> int:
        return self.quantity * self.unit_cents


def subtotal(lines: list[Line{i}]) -> int:
    """Sum of the lines, in cents."""
    return sum(line.total() for line in lines)
'''
_JS = """\
// Component {i}: renders a list of orders.
export function render{i}(orders) {{
  return orders
    .filter((o) => o.status !== "cancelled")
    .map((o) => `<li>${{o.id}}: ${{o.total}}</li>`)
    .join("\\n");
}}
"""
_MD = """\
# Notes {i}

This page describes shard {i}. Orders are grouped by customer and totals are in cents.
Nothing here is configuration; see the service's README for how to run it.
"""
_YAML = """\
name: shard-{i}
replicas: 2
resources:
  cpu: 250m
  memory: 256Mi
labels:
  team: orders
  shard: "{i}"
"""
_DOCKERFILE = """\
FROM python:3.12-slim
WORKDIR /app
COPY . .
USER 10001:10001
EXPOSE 8000
HEALTHCHECK CMD ["python", "-c", "print(1)"]
CMD ["python", "-m", "app"]
"""
_WORKFLOW = """\
name: ci-{i}
on:
  pull_request:
permissions:
  contents: read
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683
      - run: make test
"""


def build_tree(root: Path, count: int) -> None:
    """Write ``count`` clean files under ``root`` (one Dockerfile and workflow per 1,000)."""
    kinds = (("py", _PY), ("js", _JS), ("md", _MD), ("yaml", _YAML))
    for i in range(count):
        package = root / "services" / f"pkg{i // 200:03d}"
        if i % 1000 == 0:
            rel, text = package / "Dockerfile", _DOCKERFILE
        elif i % 1000 == 1:
            rel, text = root / ".github" / "workflows" / f"ci-{i}.yml", _WORKFLOW
        else:
            ext, template = kinds[i % len(kinds)]
            rel, text = package / f"mod{i}.{ext}", template
        rel.parent.mkdir(parents=True, exist_ok=True)
        rel.write_text(text.format(i=i), encoding="utf-8")


def direct_commands(root: Path) -> dict[str, list[str]]:
    """The command lines the gate runs for this tree (the file-heavy scanners)."""
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    bins = {
        "hadolint": find_binary("hadolint"),
        "detect-secrets": find_binary("detect-secrets"),
        "semgrep": resolve_semgrep(),
    }
    missing = [name for name, path in bins.items() if path is None]
    if missing:
        raise SystemExit(f"scanners missing, nothing honest to compare: {missing}")
    return {
        "hadolint": hadolint.command(str(bins["hadolint"]), [f for f in files if is_dockerfile(f)]),
        "detect-secrets": detect_secrets.command(str(bins["detect-secrets"])),
        "semgrep": semgrep.command(str(bins["semgrep"])),
    }


def _timed(cmd: list[str], root: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=root, env=tool_env(), stdin=subprocess.DEVNULL,
                   capture_output=True, text=True, timeout=900, check=False)  # fmt: skip
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    """Build the tree, time the gate and the direct commands, print the table."""
    parser = argparse.ArgumentParser(prog="python -m bench.gates_scale")
    parser.add_argument("--files", type=int, default=10_000, help="files in the tree")
    parser.add_argument("--json", dest="json_path", default=None, help="write results here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-gates-scale-") as tmp:
        root = Path(tmp) / "tree"
        build_tree(root, args.files)
        commands = direct_commands(root)
        # Concurrently, as the gate runs them: each scanner's own time and the wall clock.
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=len(commands)) as pool:
            times = list(pool.map(lambda cmd: _timed(cmd, root), commands.values()))
        direct_parallel = time.perf_counter() - start
        direct = dict(zip(commands, times, strict=True))
        start = time.perf_counter()
        report = run_gates(root)
        gate_s = time.perf_counter() - start
    skipped = {s.tool: s.detail for g in report.gates for s in g.scans if s.status == "skipped"}
    figures = {
        "files": args.files,
        "gate_s": round(gate_s, 2),
        "verdict": report.verdict,
        "skipped": skipped,
        "direct_s": {name: round(s, 2) for name, s in direct.items()},
        "direct_parallel_s": round(direct_parallel, 2),
    }
    table = Table(title=f"gate vs scanners on {args.files:,} files (seconds)")
    for column in ("run", "seconds"):
        table.add_column(column)
    table.add_row("cadencia gate (run_gates)", f"{gate_s:.1f}")
    for name, seconds in direct.items():
        table.add_row(f"  {name} (direct, concurrently with the others)", f"{seconds:.1f}")
    table.add_row("scanners directly, concurrently (wall clock)", f"{direct_parallel:.1f}")
    console = Console()
    console.print(table)
    console.print(f"verdict: {report.verdict}; skipped: {skipped or 'none'}")
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0 if report.verdict == "pass" and not skipped else 1


if __name__ == "__main__":
    sys.exit(main())
