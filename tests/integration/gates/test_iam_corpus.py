"""The gate's IAM checks over ``tests/fixtures/corpus/iam/{bad,good}`` (issue 15.2, 15.7).

Each scanner runs once over the whole corpus (the parliament subprocess and the
in-process ``iam-floor``); a case is caught when a blocking finding names its file.
Every evasion class of the issue has a case in ``bad/`` and is asserted by name, so
a regression says which class slipped through.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.gates.scanners import iam_floor, parliament
from backend.gates.scanners._base import ScanContext
from tests.ci import require

CORPUS = Path(__file__).parents[2] / "fixtures" / "corpus" / "iam"
EVASIONS = {
    "json-bom": "bad/admin-star-bom.json",
    "json-utf16": "bad/s3-star-utf16.json",
    "cloudformation-json": "bad/cfn-managed-policy.json",
    "cloudformation-managed-arns": "bad/cfn-role-admin-arn.json",
    "cloudformation-yaml": "bad/cfn-role-inline.yaml",
    "cloudformation-yaml-sub": "bad/cfn-policy-sub.yaml",
    "tf-jsonencode": "bad/tf-jsonencode-star.tf",
    "tf-heredoc": "bad/tf-heredoc-star.tf",
    "tf-policy-document": "bad/tf-policy-document.tf",
    "tf-user-policy": "bad/tf-user-policy.tf",
    "tf-group-policy": "bad/tf-group-policy.tf",
    "tf-role-attachment": "bad/tf-role-attach-admin.tf",
    "tf-user-attachment": "bad/tf-user-attach-poweruser.tf",
    "tf-group-attachment-data": "bad/tf-group-attach-iamfull.tf",
    "tf-managed-policy-arns": "bad/tf-managed-policy-arns.tf",
    "tf-module-input": "bad/tf-module-input.tf",
    "tf-for-each": "bad/tf-for-each.tf",
    "tf-inline-policy-block": "bad/tf-inline-policy-block.tf",
    "tf-dynamic-unevaluable": "bad/tf-dynamic-unevaluable.tf",
    "tf-typo-action": "bad/tf-typo.tf",
    "json-typo-action": "bad/typo-action.json",
}


def cases(kind: str) -> list[str]:
    return sorted(f"{kind}/{p.name}" for p in (CORPUS / kind).iterdir() if p.name != "SOURCES.md")


@pytest.fixture(scope="module")
def caught() -> set[str]:
    """Files with at least one blocking finding, over bad/ and good/ in one run each."""
    require(parliament.available(), "parliament (importable)")
    ctx = ScanContext(root=CORPUS, files=tuple(cases("bad") + cases("good")))
    flagged: set[str] = set()
    for scan in (iam_floor.scan, parliament.scan):
        result = scan(ctx)
        assert result is not None
        assert result.status != "skipped", result.detail
        flagged |= {f.file for f in result.findings if f.blocking}
    return flagged


def test_iam_recall_and_precision(caught: set[str]) -> None:
    bad, good = set(cases("bad")), set(cases("good"))
    true_positives = len(bad & caught)
    recall = true_positives / len(bad)
    precision = true_positives / (true_positives + len(good & caught))
    assert recall >= 0.95, sorted(bad - caught)
    assert precision >= 0.9, sorted(good & caught)


@pytest.mark.parametrize("case", list(EVASIONS.values()), ids=list(EVASIONS))
def test_each_evasion_class_is_caught(caught: set[str], case: str) -> None:
    assert case in caught
