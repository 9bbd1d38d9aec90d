"""``cadencia audit iam`` vs parliament's own CLI, same files, same run: ``python -m bench.iam``.

The issue's target is under 2 s per policy, the command's whole wall time included
(interpreter, imports, parliament's action database). Each case is timed as a user runs
it, a fresh process each time (median of ``--runs``), next to:

* ``parliament --include-community-auditors`` on the same JSON (the peer: the same
  auditors ``audit iam`` runs, without our rules and without our index of its action
  list; on ``Action "*"`` it walks that list once per action). Its CLI reads one policy
  from stdin or a ``--directory``; ``--file`` refuses to run when stdin is not a terminal;
* ``python -c "import parliament"``: the floor any parliament-based check pays.

``audit iam`` exits 1 on these policies (they are bad on purpose); a crash (exit other than
0/1/3) or a policy count other than the expected one fails the benchmark instead of timing it.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._common import print_table, write_json

TARGET_PER_POLICY_S = 2.0
STAR = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
SMALL = {
    "Version": "2012-10-17",
    "Statement": [
        {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": "arn:aws:s3:::pedidos/*"}
    ],
}
CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "corpus" / "iam" / "bad"


@dataclass
class Case:
    """One input: what ``audit iam`` reads, how many policies it must find, the peer's args."""

    name: str
    path: Path
    policies: int | None  # None: whatever it reports (the corpus)
    peer: list[str] | None  # parliament's arguments; None when it cannot read the input
    peer_stdin: Path | None = None  # its CLI takes a single policy on stdin only


def _cases(root: Path) -> list[Case]:
    small, star, ten = root / "small.json", root / "star.json", root / "ten"
    small.write_text(json.dumps(SMALL))
    star.write_text(json.dumps(STAR))
    ten.mkdir()
    for i in range(10):
        (ten / f"p{i}.json").write_text(json.dumps(STAR))
    return [
        Case("one small policy", small, 1, [], small),
        Case('one Action "*" policy', star, 1, [], star),
        Case('ten Action "*" policies', ten, 10, ["--directory", str(ten)]),
        Case("corpus iam/bad (JSON, YAML, Terraform)", CORPUS, None, None),
    ]


def _wall(
    argv: list[str], stdin: Path | None = None
) -> tuple[float, subprocess.CompletedProcess[str]]:
    with open(stdin or "/dev/null", encoding="utf-8") as given:
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, stdin=given)
        return time.perf_counter() - started, done


_COUNT = re.compile(r"\((\d+) polic(?:y|ies) in (\d+) files?\)")


def _ours(case: Case) -> tuple[float, int]:
    """Seconds of one ``audit iam`` run and the number of policies it says it read."""
    seconds, done = _wall([sys.executable, "-m", "backend.cli", "audit", "iam", str(case.path)])
    if done.returncode not in (0, 1, 3):
        raise SystemExit(f"audit iam crashed on {case.path} ({done.returncode}): {done.stderr}")
    found = _COUNT.search(done.stdout)
    policies = int(found.group(1)) if found else 0
    if case.policies is not None and policies != case.policies:
        raise SystemExit(f"audit iam read {policies} policies in {case.path}, not {case.policies}")
    return seconds, policies


def _peer(case: Case) -> float:
    argv = [sys.executable, "-m", "parliament.cli", "--include-community-auditors"]
    argv += case.peer or []
    seconds, done = _wall(argv, case.peer_stdin)
    if done.returncode not in (0, 1) or "error:" in done.stderr:
        raise SystemExit(f"parliament failed on {case.path} ({done.returncode}): {done.stderr}")
    return seconds


def run(runs: int, peer_runs: int) -> dict[str, Any]:
    """Time every case; the JSON result."""
    out: dict[str, Any] = {"runs": runs, "cases": {}}
    with tempfile.TemporaryDirectory(prefix="bench-iam-") as tmp:
        floor = statistics.median(
            _wall([sys.executable, "-c", "import parliament"])[0] for _ in range(runs)
        )
        out["import_parliament_s"] = round(floor, 3)
        for case in _cases(Path(tmp)):
            ours = [_ours(case) for _ in range(runs)]
            seconds = statistics.median(s for s, _ in ours)
            policies = ours[0][1]
            row: dict[str, Any] = {
                "policies": policies,
                "audit_iam_s": round(seconds, 3),
                "per_policy_s": round(seconds / max(policies, 1), 3),
            }
            if case.peer is not None:
                row["parliament_cli_s"] = round(
                    statistics.median(_peer(case) for _ in range(peer_runs)), 3
                )
            out["cases"][case.name] = row
            print(f"  {case.name}: {row}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    """Run, print the table, write ``--json``."""
    parser = argparse.ArgumentParser(prog="python -m bench.iam", description=__doc__)
    parser.add_argument("--runs", type=int, default=5, help="runs of each audit iam case")
    parser.add_argument("--peer-runs", type=int, default=1, help="runs of each parliament case")
    parser.add_argument("--json", type=Path, default=None, help="write the result here")
    args = parser.parse_args(argv)
    result = run(args.runs, args.peer_runs)
    rows = [("python -c 'import parliament'", f"{result['import_parliament_s']:.2f} s", "floor")]
    for name, row in result["cases"].items():
        peer = row.get("parliament_cli_s")
        versus = f" (parliament CLI {peer:.2f} s)" if peer is not None else ""
        rows.append(
            (
                f"{name}: {row['policies']} policies",
                f"{row['audit_iam_s']:.2f} s, {row['per_policy_s']:.2f} s/policy{versus}",
                f"< {TARGET_PER_POLICY_S:.0f} s/policy",
            )
        )
    print_table("bench.iam — audit iam wall time, fresh process per run", rows)
    if args.json is not None:
        write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
