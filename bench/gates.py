"""Gate runner vs the same scanner commands run directly: ``python -m bench.gates --json FILE``.

First, the corpus table: precision and recall per scanner family over
``tests/fixtures/corpus/`` (:mod:`bench.corpus`; each family scanned once), with the time
of that gate run.

On a sample tree (Dockerfiles, compose, workflows, Terraform, an IAM policy), times
``run_gates`` against running the identical scanner command lines (the adapters'
``command()``) back to back with ``subprocess``, interleaved over several rounds; the
median of each is compared. ``run_gates`` also copies the tree, strips suppressions,
runs the built-in checks and parses every output; it runs a gate's scanners in
threads, so the same commands run concurrently are reported too (``direct_parallel_s``)
to show what is machinery overhead and what is parallelism.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rich.console import Console
from rich.table import Table

from backend.gates.runner import resolve_semgrep, run_gates
from backend.gates.scanners import (
    detect_secrets,
    hadolint,
    parliament,
    semgrep,
    terraform,
    zizmor,
)
from backend.gates.scanners._base import find_binary, tool_env
from backend.gates.targets import is_dockerfile
from bench.corpus import score_all

_PY = """\
FROM python:3.12-slim AS build
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir --prefix=/install -r requirements.txt

FROM python:3.12-slim
WORKDIR /app
COPY --from=build /install /usr/local
COPY . .
USER 10001:10001
EXPOSE {port}
CMD ["python", "-m", "app"]
"""
_GO = """\
FROM golang:1.23-alpine AS build
WORKDIR /src
COPY . .
RUN CGO_ENABLED=0 go build -o /out/app ./cmd/app

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/app /app
USER 65532:65532
ENTRYPOINT ["/app"]
"""
_WORKFLOW = """\
name: {name}
on:
  push:
    branches: [main]
  pull_request:
permissions:
  contents: read
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: make test
"""
SAMPLE: dict[str, str] = {
    "services/api/Dockerfile": _PY.format(port=8000),
    "services/worker/Dockerfile.prod": _PY.format(port=8001),
    "services/gw/Dockerfile": _GO,
    "compose.yaml": (
        "services:\n"
        '  api:\n    image: api:1.0.0\n    ports: ["127.0.0.1:8000:8000"]\n'
        "  worker:\n    image: worker:1.0.0\n"
        '  gw:\n    image: gw:1.0.0\n    ports: ["127.0.0.1:8080:8080"]\n'
    ),
    ".github/workflows/ci.yml": _WORKFLOW.format(name="ci"),
    ".github/workflows/release.yml": _WORKFLOW.format(name="release"),
    "deploy/terraform/main.tf": (
        'resource "null_resource" "x" {\n  triggers = {\n    a = "b"\n  }\n}\n'
    ),
    "deploy/iam/policy.json": (
        '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "dynamodb:GetItem",'
        ' "Resource": "arn:aws:dynamodb:us-east-1:123456789012:table/t"}]}\n'
    ),
}


def direct_commands(root: Path) -> list[list[str]]:
    """The scanner command lines ``run_gates`` runs, for the same tree, resolved once.

    Every third-party scanner the gate runs is here; the gate's own checks (Dockerfile,
    compose, IAM floor, the regex floor) are not: they are what the gate adds.
    """
    files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    needed = {
        "hadolint": find_binary("hadolint"),
        "terraform": find_binary("terraform", Path("/usr/local/bin/terraform")),
        "detect-secrets": find_binary("detect-secrets"),
        "semgrep": resolve_semgrep(),
        "zizmor": find_binary("zizmor"),
    }
    missing = [k for k, v in needed.items() if v is None]
    if missing:
        raise SystemExit(f"scanners missing, nothing honest to compare: {missing}")
    bins = {k: str(v) for k, v in needed.items()}
    return [
        hadolint.command(bins["hadolint"], [f for f in files if is_dockerfile(f)]),
        terraform.command(bins["terraform"]),
        detect_secrets.command(bins["detect-secrets"]),
        semgrep.command(bins["semgrep"], files),
        parliament.command(sys.executable, ["deploy/iam/policy.json"]),
        zizmor.command(bins["zizmor"], [f for f in files if zizmor.is_workflow(f)]),
    ]


def _run(cmd: list[str], root: Path) -> None:
    # cmd is an adapter's own command(): each ends its options with "--" before the paths
    subprocess.run(cmd, cwd=root, env=tool_env(), stdin=subprocess.DEVNULL,
                   capture_output=True, text=True, timeout=300, check=False)  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark, print a table, write the JSON figures."""
    parser = argparse.ArgumentParser(prog="python -m bench.gates")
    parser.add_argument("--json", dest="json_path", default=None, help="write results here")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-corpus", action="store_true", help="skip the corpus table")
    args = parser.parse_args(argv)
    console = Console()
    corpus = [] if args.no_corpus else [s.to_json() for s in score_all()]
    if corpus:
        ctable = Table(title="corpus: precision / recall per scanner family")
        for column in (
            "family",
            "bad",
            "good",
            "precision",
            "recall",
            "missed",
            "false alarms",
            "s",
        ):
            ctable.add_column(column)
        for row in corpus:
            ctable.add_row(
                row["family"], str(row["bad"]), str(row["good"]), f"{row['precision']:.3f}",
                f"{row['recall']:.3f}", ", ".join(row["missed"]) or "-",
                ", ".join(row["false_alarms"]) or "-", f"{row['seconds']:.2f}",
            )  # fmt: skip
        console.print(ctable)

    with tempfile.TemporaryDirectory(prefix="bench-gates-") as tmp:
        root = Path(tmp)
        for rel, text in SAMPLE.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        commands = direct_commands(root)
        report = run_gates(root)  # warm-up, and a check that the sample is what we think
        if report.verdict != "pass":
            raise SystemExit(f"sample did not pass: {json.dumps(report.to_json())}")

        def direct_sequential() -> None:
            for cmd in commands:
                _run(cmd, root)

        def direct_parallel() -> None:
            with ThreadPoolExecutor(max_workers=len(commands)) as pool:
                list(pool.map(lambda c: _run(c, root), commands))

        workloads = {
            "gate": lambda: run_gates(root),
            "direct": direct_sequential,
            "direct_parallel": direct_parallel,
        }
        times: dict[str, list[float]] = {name: [] for name in workloads}
        for _ in range(args.rounds):
            for name, work in workloads.items():  # interleaved: drift hits all alike
                start = time.perf_counter()
                work()
                times[name].append(time.perf_counter() - start)

    med = {name: statistics.median(values) for name, values in times.items()}
    result = {
        "gate_s": round(med["gate"], 4),
        "direct_s": round(med["direct"], 4),
        "overhead_ratio": round(med["gate"] / med["direct"], 3),
        "direct_parallel_s": round(med["direct_parallel"], 4),
        "overhead_vs_parallel_ratio": round(med["gate"] / med["direct_parallel"], 3),
        "gate_min_s": round(min(times["gate"]), 4),
        "direct_min_s": round(min(times["direct"]), 4),
        "overhead_ratio_min": round(min(times["gate"]) / min(times["direct"]), 3),
        "rounds": args.rounds,
        "files": len(SAMPLE),
        "target_overhead_ratio": 1.2,
        "corpus": corpus,
    }
    table = Table(title=f"gates vs direct scanners ({args.rounds} rounds, median)")
    for column in ("workload", "median s", "min s", "max s"):
        table.add_column(column)
    for name, values in times.items():
        table.add_row(name, f"{med[name]:.3f}", f"{min(values):.3f}", f"{max(values):.3f}")
    console.print(table)
    console.print(
        f"gate / scanners run directly in parallel = "
        f"[bold]{result['overhead_vs_parallel_ratio']}x[/] (target <= 1.2x); "
        f"gate / scanners one after another = {result['overhead_ratio']}x"
    )
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
