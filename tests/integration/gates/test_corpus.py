"""Precision and recall per scanner family over ``tests/fixtures/corpus/`` (real scanners).

Each family is scanned once as one tree (see :mod:`bench.corpus`) and held to the floors
of its own ``family.json``; no family may set a floor under the issue's 0.95/0.95. The
secrets family is scored by line: a finding counts only on the line a secret starts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.corpus import CORPUS, CorpusError, FamilyScore, expected_lines, families, score

FLOOR = 0.95
"""The least precision and recall any family may promise (issue 33)."""
SCORED_ELSEWHERE = {"iam"}
"""Families whose own test scores them with the same floors plus one test per evasion class
(``test_iam_corpus.py``): scanning them here again would only cost CI time."""
FAMILIES = [f for f in families() if f.name not in SCORED_ELSEWHERE]


def _floors(family: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((family / "family.json").read_text(encoding="utf-8"))
    return data


def test_every_family_has_cases_and_the_secrets_family_is_scored_by_line() -> None:
    names = [f.name for f in FAMILIES]
    assert "secrets" in names
    for family in FAMILIES:
        assert (family / "bad").is_dir() or (family / "good").is_dir(), family
    assert (CORPUS / "SOURCES.md").is_file()
    assert _floors(CORPUS / "secrets")["level"] == "line"


@pytest.mark.parametrize("family", families(), ids=[f.name for f in families()])
def test_no_family_promises_less_than_the_floor(family: Path) -> None:
    floors = _floors(family)
    assert float(str(floors["min_precision"])) >= FLOOR, family.name
    assert float(str(floors["min_recall"])) >= FLOOR, family.name


def test_the_secrets_expectations_name_real_lines_of_every_bad_case() -> None:
    expected = expected_lines(CORPUS / "secrets")
    cases = {"/".join(file.split("/")[:2]) for file, _ in expected}
    bad = {f"bad/{p.name}" for p in (CORPUS / "secrets" / "bad").iterdir()}
    assert cases == bad
    assert len(expected) >= 40


def test_a_line_level_family_without_expectations_is_refused(tmp_path: Path) -> None:
    (tmp_path / "bad" / "leak").mkdir(parents=True)
    (tmp_path / "bad" / "leak" / "app.py").write_text('token = "x"\n', encoding="utf-8")
    (tmp_path / "family.json").write_text('{"level": "line"}', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"expected\.json"):
        expected_lines(tmp_path)
    (tmp_path / "expected.json").write_text('{"bad/leak/app.py": [2]}', encoding="utf-8")
    with pytest.raises(CorpusError, match="no line 2"):
        expected_lines(tmp_path)


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_family_precision_and_recall(scanners: dict[str, str], family: Path) -> None:
    result: FamilyScore = score(family)
    floors = result.config
    detail = f"missed={result.missed} false_alarms={result.false_alarms}"
    assert result.precision >= float(floors["min_precision"]), detail
    assert result.recall >= float(floors["min_recall"]), detail
