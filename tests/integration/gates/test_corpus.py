"""Precision and recall per scanner family over ``tests/fixtures/corpus/`` (real scanners).

Each family is scanned once as one tree (see :mod:`bench.corpus`); the floors come from
its ``family.json``. The secrets family: planted secrets (lock files and SVG included)
must be found, digests, ids and references adapted from real repositories must not.
"""

from __future__ import annotations

import pytest

from bench.corpus import CORPUS, FamilyScore, families, score

SCORED_ELSEWHERE = {"iam"}
"""Families whose own test scores them with the same floors plus one test per evasion class
(``test_iam_corpus.py``): scanning them here again would only cost CI time."""
FAMILIES = [f for f in families() if f.name not in SCORED_ELSEWHERE]


def test_every_family_has_cases_and_the_secrets_family_has_floors() -> None:
    names = [f.name for f in FAMILIES]
    assert "secrets" in names
    for family in FAMILIES:
        assert (family / "bad").is_dir() or (family / "good").is_dir(), family
    assert (CORPUS / "SOURCES.md").is_file()


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
def test_family_precision_and_recall(scanners: dict[str, str], family) -> None:  # type: ignore[no-untyped-def]
    result: FamilyScore = score(family)
    floors = result.config
    detail = f"missed={result.missed} false_alarms={result.false_alarms}"
    assert result.precision >= float(floors.get("min_precision", 0.0)), detail
    assert result.recall >= float(floors.get("min_recall", 0.0)), detail
    if family.name == "secrets":
        assert (floors["min_precision"], floors["min_recall"]) == (0.9, 0.95)
