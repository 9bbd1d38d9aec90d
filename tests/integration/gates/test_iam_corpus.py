"""The gate's IAM checks over ``tests/fixtures/corpus/iam/{bad,good}`` (issues 15, 33).

Each scanner runs once over the whole corpus (the parliament subprocess and the
in-process ``iam-floor``); a case is caught when a blocking finding names its file.
Every evasion class has a case in ``bad/`` and every false-alarm class (a scoped or
conditional public policy once reported as too broad) one in ``good/``, each asserted by
name, so a regression says which class slipped through or came back.
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
    # issue 33: a Condition or a scope that only looks like one
    "service-wildcard-in-one-region": "bad/ec2-star-region-only.json",
    "data-on-star-in-one-region": "bad/dynamodb-scan-region-only.json",
    "condition-ifexists": "bad/terminate-tag-ifexists.json",
    "condition-negated": "bad/getobject-star-negated-region.json",
    "condition-any-value": "bad/secrets-tag-any-value.json",
    "condition-mfa-only": "bad/secrets-mfa-only.json",
    "tf-condition-mfa-only": "bad/tf-secrets-mfa-only.tf",
    "cloudformation-condition-ifexists": "bad/cfn-kms-ifexists.yaml",
    "passrole-to-service-then-invoke": "bad/passrole-lambda-escalation.json",
    "tf-passrole-star-runinstances": "bad/tf-passrole-star-runinstances.tf",
    "attach-policy-to-self": "bad/self-attach-user-policy.json",
    "write-actions-on-star": "bad/cs-ecr-push-any-repo.json",
    "service-wildcards": "bad/cs-wildcards.json",
    "credentials-exposure": "bad/parl-credentials-exposure.json",
    "permissions-management": "bad/parl-permissions-management.json",
    "notresource-allow": "bad/parl-notresource-allow.json",
    "data-and-access-key-on-star": "bad/cs-getobject-createaccesskey.json",
}
# Scoped, conditional public policies that were reported as too broad (issue 33).
FALSE_ALARMS = {
    "abac-resource-tag": "good/aws-ec2-start-stop-abac.json",
    "abac-secrets-tag": "good/aws-abac-secrets-read.json",
    "tf-abac-resource-tag": "good/tf-ec2-abac.tf",
    "cloudformation-abac-secrets": "good/cfn-abac-secrets.yaml",
    "passrole-passed-to-service": "good/aws-passrole-to-service.json",
    "tf-passrole-passed-to-service": "good/tf-passrole-to-ecs.tf",
    "attach-listed-policies": "good/aws-attach-listed-policies.json",
    "requested-region": "good/aws-ec2-region-lifecycle.json",
    "vpc-endpoint": "good/kinesis-producer-vpce.json",
    "s3-prefix-home-directory": "good/aws-s3-home-directory.json",
    "own-credentials-mfa": "good/aws-self-manage-credentials-mfa.json",
    "own-access-keys": "good/cs-own-access-keys.json",
    "cloudformation-own-credentials": "good/cfn-own-credentials.json",
    "describe-list-on-star": "good/aws-ec2-describe-readonly.json",
    "tf-describe-on-star": "good/tf-readonly-describe.tf",
    "tf-iam-variables-list-all-buckets": "good/tf-s3-home-prefix.tf",
    "iam-read-only-console": "good/aws-iam-read-only-console.json",
    "dynamodb-list-describe": "good/aws-dynamodb-list-describe.json",
    "ecr-authorization-token": "good/cs-ecr-pull-one-repo.json",
    "deny-notaction-region-guardrail": "good/aws-deny-outside-regions.json",
    "deny-notresource": "good/parl-deny-notresource.json",
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
    assert precision >= 0.95, sorted(good & caught)


@pytest.mark.parametrize("case", list(EVASIONS.values()), ids=list(EVASIONS))
def test_each_evasion_class_is_caught(caught: set[str], case: str) -> None:
    assert case in caught


@pytest.mark.parametrize("case", list(FALSE_ALARMS.values()), ids=list(FALSE_ALARMS))
def test_each_false_alarm_class_stays_quiet(caught: set[str], case: str) -> None:
    assert (CORPUS / case).is_file()
    assert case not in caught
