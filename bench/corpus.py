"""Precision and recall of the gate's scanners over ``tests/fixtures/corpus/``.

Layout: ``<family>/{bad,good}/<case>``, a case being a file or a folder of files with their
real names; a bad case must be flagged, a good one must not. ``family.json`` (optional)
says which gate runs (``qa``/``secops``; both when absent), which findings count
(``{"tool": "*" | [rule, ...]}``; every blocking one when absent), the floors
(``min_precision``, ``min_recall``) and the level: ``"line"`` scores by line against
``expected.json`` (each bad file to the lines a secret starts on), else by case. Each
family is scanned ONCE as one tree; a skipped scanner raises instead of scoring.
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


Line = tuple[str, int]
"""A file relative to the family folder (``bad/<case>/...``) and a 1-based line (0: none)."""


@dataclass(frozen=True)
class FamilyScore:
    """One family's confusion counts and what went wrong, by case or by line.

    Attributes:
        expected: at line level, every (file, line) a secret starts on; ``None`` at case
            level.
        found: at line level, every counted finding's (file, line), deduplicated.
    """

    family: str
    bad: tuple[str, ...]
    good: tuple[str, ...]
    flagged: frozenset[str]
    seconds: float
    config: dict[str, Any] = field(default_factory=dict)
    expected: frozenset[Line] | None = None
    found: frozenset[Line] = frozenset()

    @property
    def level(self) -> str:
        """``line`` or ``case``: what precision and recall count."""
        return "case" if self.expected is None else "line"

    @property
    def missed(self) -> list[str]:
        """Bad cases nothing flagged, or at line level expected ``file:line`` with no finding."""
        if self.expected is not None:
            return [_label(x) for x in sorted(self.expected - self.found)]
        return [c for c in self.bad if c not in self.flagged]

    @property
    def false_alarms(self) -> list[str]:
        """Good cases that were flagged, or at line level ``file:line`` findings no secret
        starts on (any finding under ``good/``, or a line away from the secret)."""
        if self.expected is not None:
            return [_label(x) for x in sorted(self.found - self.expected)]
        return [c for c in self.good if c in self.flagged]

    @property
    def precision(self) -> float:
        """True positives over everything flagged (1.0 when nothing was flagged)."""
        if self.expected is not None:
            hits = len(self.found & self.expected)
            return hits / len(self.found) if self.found else 1.0
        hits = len(self.bad) - len(self.missed)
        flagged = hits + len(self.false_alarms)
        return hits / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        """Flagged bad cases over every bad case, or found expected lines over all of them."""
        if self.expected is not None:
            hits = len(self.found & self.expected)
            return hits / len(self.expected) if self.expected else 1.0
        return (len(self.bad) - len(self.missed)) / len(self.bad) if self.bad else 1.0

    def to_json(self) -> dict[str, Any]:
        """The figures ``python -m bench.gates --json`` writes (``lines``: expected lines at
        line level, else ``null``)."""
        return {
            "family": self.family,
            "level": self.level,
            "bad": len(self.bad),
            "good": len(self.good),
            "lines": None if self.expected is None else len(self.expected),
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
    """Scan ``family`` once and score every case, or every line at ``"level": "line"``.

    At line level a finding (deduplicated by file and line) counts as a hit only on a line
    ``expected.json`` names for its file; any other, ``good/`` included, is a false alarm.

    Raises:
        CorpusError: a scanner was skipped, the family has no case, or (line level) its
            ``expected.json`` does not match its bad files.
    """
    config = _config(family)
    if config.get("level", "case") not in ("case", "line"):
        raise CorpusError(f"{family.name}: level must be 'case' or 'line'")
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
    counted = [f for r in results for f in r.findings if _counts(f, counts)]
    flagged = frozenset(case for f in counted if (case := _case_of(f.file)) is not None)
    if config.get("level", "case") == "case":
        return FamilyScore(family.name, bad, good, flagged, seconds, config)
    found = frozenset((f.file, f.line or 0) for f in counted if _case_of(f.file) is not None)
    return FamilyScore(
        family.name, bad, good, flagged, seconds, config, expected_lines(family), found
    )


def score_all(root: Path = CORPUS, settings: Settings | None = None) -> list[FamilyScore]:
    """Every family's score, in name order."""
    return [score(f, settings) for f in families(root)]


def expected_lines(family: Path) -> frozenset[Line]:
    """The (file, line) pairs of ``family/expected.json``: ``{"bad/<case>/<file>": [line...]}``.

    Raises:
        CorpusError: the file is missing or malformed, names a file that is not under
            ``bad/`` or a line the file does not have, or a bad case has no expected line.
    """
    path = family / "expected.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CorpusError(f"{family.name}: line level needs expected.json ({exc})") from exc
    if not isinstance(data, dict):
        raise CorpusError(f"{family.name}: expected.json must map files to line lists")
    out: set[Line] = set()
    for file, lines in data.items():
        target = family / file
        if _case_of(file) is None or not file.startswith("bad/") or not target.is_file():
            raise CorpusError(f"{family.name}: expected.json names {file!r}, not a bad file")
        count = len(target.read_bytes().splitlines())
        if not isinstance(lines, list) or not lines:
            raise CorpusError(f"{family.name}: {file}: a non-empty list of lines expected")
        for line in lines:
            if not isinstance(line, int) or not 1 <= line <= count:
                raise CorpusError(f"{family.name}: {file} has no line {line!r}")
            out.add((file, line))
    without = set(_cases(family, "bad")) - {_case_of(f) for f, _ in out}
    if without:
        raise CorpusError(f"{family.name}: bad cases with no expected line: {sorted(without)}")
    return frozenset(out)


def _label(line: Line) -> str:
    return f"{line[0]}:{line[1]}"


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
