"""Precision and recall of the gate's scanners over ``tests/fixtures/corpus/``.

Layout: ``tests/fixtures/corpus/<family>/{bad,good}/<case>`` where a case is a file or a
folder of files with their real names (``package-lock.json``, ``Dockerfile``...). A
``bad`` case must be flagged, a ``good`` one must not. Families are discovered by
folder, so a helper adds a family by adding a folder; an optional ``family.json`` says
which gate to run (``qa``, ``secops``; both when absent), which findings count
(``{"tool": "*" | [rule, ...]}``; every blocking finding when absent) and the floors the
test asserts (``min_precision``, ``min_recall``).

Each family is scanned ONCE: the whole family folder goes through the gate runner as one
tree, and findings are attributed to cases by path. A skipped scanner makes the score
meaningless, so it raises instead of scoring.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backend.gates.findings import Finding
from backend.gates.runner import GateResult, run_gates, run_qa, run_secops
from backend.settings import Settings

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "corpus"
LABELS = ("bad", "good")


class CorpusError(Exception):
    """The corpus could not be scored honestly (a scanner was skipped, a family is empty)."""


@dataclass(frozen=True)
class FamilyScore:
    """One family's confusion counts and what went wrong, case by case."""

    family: str
    bad: tuple[str, ...]
    good: tuple[str, ...]
    flagged: frozenset[str]
    seconds: float
    config: dict[str, Any] = field(default_factory=dict)

    @property
    def missed(self) -> list[str]:
        """Bad cases nothing flagged (false negatives)."""
        return [c for c in self.bad if c not in self.flagged]

    @property
    def false_alarms(self) -> list[str]:
        """Good cases that were flagged (false positives)."""
        return [c for c in self.good if c in self.flagged]

    @property
    def precision(self) -> float:
        """Flagged bad cases over every flagged case (1.0 when nothing was flagged)."""
        hits = len(self.bad) - len(self.missed)
        flagged = hits + len(self.false_alarms)
        return hits / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        """Flagged bad cases over every bad case."""
        return (len(self.bad) - len(self.missed)) / len(self.bad) if self.bad else 1.0

    def to_json(self) -> dict[str, Any]:
        """The figures ``python -m bench.gates --json`` writes."""
        return {
            "family": self.family,
            "bad": len(self.bad),
            "good": len(self.good),
            "precision": round(self.precision, 3),
            "recall": round(self.recall, 3),
            "missed": self.missed,
            "false_alarms": self.false_alarms,
            "seconds": round(self.seconds, 3),
        }


def families(root: Path = CORPUS) -> list[Path]:
    """Every family folder (one with a ``bad/`` or ``good/`` folder), by name."""
    return sorted(
        p for p in root.iterdir() if p.is_dir() and any((p / lbl).is_dir() for lbl in LABELS)
    )


def score(family: Path, settings: Settings | None = None) -> FamilyScore:
    """Scan ``family`` once and score every case.

    Raises:
        CorpusError: a scanner was skipped, or the family has no case.
    """
    config = _config(family)
    bad, good = _cases(family, "bad"), _cases(family, "good")
    if not bad and not good:
        raise CorpusError(f"{family.name}: no case under bad/ or good/")
    start = time.perf_counter()
    results = _run(family, config.get("gate"), settings)
    seconds = time.perf_counter() - start
    skipped = [s.tool for r in results for s in r.scans if s.status == "skipped"]
    if skipped:
        details = "; ".join(
            f"{s.tool}: {s.detail}" for r in results for s in r.scans if s.status == "skipped"
        )
        raise CorpusError(f"{family.name}: scanners skipped, no honest score ({details})")
    counts = config.get("count")
    flagged = frozenset(
        case
        for r in results
        for f in r.findings
        if _counts(f, counts) and (case := _case_of(f.file)) is not None
    )
    return FamilyScore(family.name, bad, good, flagged, seconds, config)


def score_all(root: Path = CORPUS, settings: Settings | None = None) -> list[FamilyScore]:
    """Every family's score, in name order."""
    return [score(f, settings) for f in families(root)]


def _config(family: Path) -> dict[str, Any]:
    path = family / "family.json"
    if not path.is_file():
        return {}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _cases(family: Path, label: str) -> tuple[str, ...]:
    folder = family / label
    if not folder.is_dir():
        return ()
    return tuple(f"{label}/{p.name}" for p in sorted(folder.iterdir()))


def _run(family: Path, gate: str | None, settings: Settings | None) -> list[GateResult]:
    if gate == "qa":
        return [run_qa(family, settings)]
    if gate == "secops":
        return [run_secops(family, settings)]
    return list(run_gates(family, settings).gates)


def _counts(finding: Finding, counts: dict[str, Any] | None) -> bool:
    if not finding.blocking:
        return False
    if counts is None:
        return True
    rules = counts.get(finding.tool)
    return rules == "*" or (isinstance(rules, list) and finding.rule in rules)


def _case_of(file: str) -> str | None:
    parts = file.split("/")
    if len(parts) < 2 or parts[0] not in LABELS:
        return None
    return f"{parts[0]}/{parts[1]}"
