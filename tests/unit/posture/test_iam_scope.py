"""Confined grants: which Conditions narrow a ``Resource "*"`` and what that quiets.

Each rule change of issue 33 has its pair here: the public shape that must stay quiet
(AWS documentation, cloudsplaining, parliament) next to the near miss that must still fail.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from backend.posture.iam import audit_sources
from backend.posture.iam_model import PolicySource
from backend.posture.iam_parliament import analyze
from backend.posture.iam_rules import is_data_action
from backend.posture.iam_scope import confined, quiet_reason, scoped_resource

TAG = {"StringEquals": {"aws:ResourceTag/team": "${aws:PrincipalTag/team}"}}
REGION = {"StringEquals": {"aws:RequestedRegion": "eu-west-1"}}


def allow(actions: Any, resources: Any = "*", **extra: Any) -> dict[str, Any]:
    return {"Effect": "Allow", "Action": actions, "Resource": resources, **extra}


def policy(*statements: dict[str, Any]) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def errors(*statements: dict[str, Any]) -> set[str]:
    """Rules of the error findings of the general audit (the gate's rules) plus parliament."""
    source = PolicySource(file="p.json", name="p", document=policy(*statements))
    return {f.rule for f in audit_sources([source], lab_rules=False) if f.severity == "error"}


def blocking_hits(*statements: dict[str, Any]) -> set[str]:
    """parliament's issues the gate's ``parliament`` scanner would block on."""
    document = policy(*statements)
    hits = analyze(json.dumps(document, indent=2), "p.json", document)
    return {h.issue for h in hits if h.severity not in ("MUTE", "INFO") and not h.quiet}


@pytest.mark.parametrize(
    ("condition", "data", "expected"),
    [
        (TAG, True, True),
        ({"StringEquals": {"secretsmanager:ResourceTag/app": "billing"}}, True, True),
        ({"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}}, False, True),
        ({"StringLike": {"s3:prefix": ["home/${aws:username}/*"]}}, True, True),
        ({"ArnEquals": {"iam:PolicyARN": ["arn:aws:iam::aws:policy/ReadOnlyAccess"]}}, False, True),
        (REGION, False, True),
        ({"StringEquals": {"aws:SourceVpce": "vpce-1a2b3c4d"}}, False, True),
        # the region or the endpoint do not say which table or secret: not for data
        (REGION, True, False),
        ({"StringEquals": {"aws:SourceVpce": "vpce-1a2b3c4d"}}, True, False),
        # absent key passes IfExists, negations and ForAllValues: they confine nothing
        ({"StringEqualsIfExists": {"aws:ResourceTag/team": "a"}}, False, False),
        ({"StringNotEquals": {"aws:RequestedRegion": "us-west-1"}}, False, False),
        ({"ForAllValues:StringEquals": {"aws:ResourceTag/team": ["a"]}}, False, False),
        # a value that matches anything confines nothing
        ({"StringLike": {"aws:ResourceTag/team": "*"}}, True, False),
        # who asks (MFA) or when is no limit on what
        ({"Bool": {"aws:MultiFactorAuthPresent": "true"}}, False, False),
        ({}, False, False),
        ("not a condition", False, False),
    ],
)
def test_which_conditions_confine(condition: Any, data: bool, expected: bool) -> None:
    assert confined(condition, data=data) is expected


@pytest.mark.parametrize(
    ("resource", "expected"),
    [
        ("arn:aws:iam::*:user/${aws:username}", True),
        ("arn:aws:iam::111122223333:role/EC2-roles-for-XYZ-*", True),
        ("arn:aws:s3:::bucket/*", True),
        ("arn:aws:secretsmanager:us-east-1:111122223333:secret:app-??????", True),
        ("*", False),
        ("arn:aws:iam::111122223333:role/*", False),
        ("arn:aws:s3:::*", False),
        ("arn:aws:s3:::*/*", False),
        ("arn:aws:secretsmanager:us-east-1:111122223333:secret:*", False),
    ],
)
def test_scoped_resource(resource: str, expected: bool) -> None:
    assert scoped_resource(resource) is expected


def test_tag_confined_data_grant_is_not_resource_star() -> None:
    # AWS IAM ABAC tutorial shape; without the Condition it is the seed's mistake.
    read = ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
    assert errors(allow(read, Condition=TAG)) == set()
    assert "secret_wildcard" in errors(allow(read))
    assert "resource_star" not in errors(allow(["s3:GetObject"], Condition=TAG))
    assert "resource_star" in errors(allow(["s3:GetObject"]))


def test_region_does_not_confine_a_data_grant() -> None:
    assert "resource_star" in errors(allow(["dynamodb:Scan"], Condition=REGION))


def test_region_confines_instance_lifecycle_but_not_a_service_wildcard() -> None:
    assert errors(allow(["ec2:StartInstances", "ec2:StopInstances"], Condition=REGION)) == set()
    assert blocking_hits(allow(["ec2:StartInstances"], Condition=REGION)) == set()
    assert "RESOURCE_STAR" in blocking_hits(allow(["ec2:StartInstances"]))
    assert "wildcard_action" in errors(allow("ec2:*", Condition=REGION))


def test_dynamodb_list_and_describe_on_star_is_not_a_data_grant() -> None:
    assert not is_data_action("dynamodb:ListTables")
    assert not is_data_action("dynamodb:DescribeTimeToLive")
    assert is_data_action("dynamodb:Scan")
    assert is_data_action("dynamodb:BatchGetItem")
    describe = ["dynamodb:List*", "dynamodb:DescribeLimits", "dynamodb:DescribeTimeToLive"]
    assert errors(allow(describe)) == set()
    assert blocking_hits(allow(describe)) == set()


def test_metadata_reads_on_star_are_quiet_writes_are_not() -> None:
    assert blocking_hits(allow(["ec2:Describe*", "iam:GetRole", "iam:ListRoles"])) == set()
    assert errors(allow(["ec2:Describe*", "iam:GetRole"])) == set()
    assert "RESOURCE_STAR" in blocking_hits(allow(["ec2:TerminateInstances"]))
    assert "parliament:RESOURCE_STAR" in errors(allow(["ec2:TerminateInstances"]))


def test_passrole_confined_to_a_service_is_quiet_unless_it_escalates() -> None:
    passed = {"StringEquals": {"iam:PassedToService": "lambda.amazonaws.com"}}
    assert blocking_hits(allow("iam:PassRole", Condition=passed)) == set()
    assert "PERMISSIONS_MANAGEMENT_ACTIONS" in blocking_hits(allow("iam:PassRole"))
    escalation = blocking_hits(
        allow("iam:PassRole", Condition=passed),
        allow(["lambda:CreateFunction", "lambda:InvokeFunction"]),
    )
    assert "PRIVILEGE_ESCALATION" in escalation


def test_own_credentials_are_quiet_own_policies_are_not() -> None:
    own = "arn:aws:iam::*:user/${aws:username}"
    keys = ["iam:CreateAccessKey", "iam:UpdateAccessKey", "iam:DeleteAccessKey"]
    assert blocking_hits(allow(keys, own)) == set()
    assert {"PRIVILEGE_ESCALATION", "CREDENTIALS_EXPOSURE"} <= blocking_hits(allow(keys))
    assert "PRIVILEGE_ESCALATION" in blocking_hits(allow("iam:AttachUserPolicy", own))


def test_attaching_listed_policies_only_is_quiet() -> None:
    listed = {"ArnEquals": {"iam:PolicyARN": ["arn:aws:iam::aws:policy/ReadOnlyAccess"]}}
    assert blocking_hits(allow(["iam:AttachUserPolicy"], Condition=listed)) == set()
    assert "PRIVILEGE_ESCALATION" in blocking_hits(allow(["iam:AttachUserPolicy"]))


def test_registry_token_is_no_credentials_exposure_cluster_credentials_are() -> None:
    assert blocking_hits(allow("ecr:GetAuthorizationToken")) == set()
    assert "CREDENTIALS_EXPOSURE" in blocking_hits(allow("redshift:GetClusterCredentials"))


def test_unknown_condition_key_narrows_an_allow_not_a_deny() -> None:
    condition = {"StringEquals": {"rds:db-tag/Owner": "${aws:username}"}}
    stmt = allow(
        "rds:RebootDBInstance", "arn:aws:rds:us-east-1:111122223333:db:app", Condition=condition
    )
    document = policy(stmt)
    why = quiet_reason("UNKNOWN_CONDITION_FOR_ACTION", document, 0, [], is_data_action)
    assert why is not None
    document = policy({**stmt, "Effect": "Deny"})
    assert quiet_reason("UNKNOWN_CONDITION_FOR_ACTION", document, 0, [], is_data_action) is None


def test_bool_condition_as_terraform_writes_it_does_not_crash_parliament() -> None:
    # aws_iam_policy_document renders every value as a list; parliament 1.6.4 crashed on it.
    mfa = {"Bool": {"aws:MultiFactorAuthPresent": ["true"]}}
    assert "secret_wildcard" in errors(allow("secretsmanager:GetSecretValue", Condition=mfa))


def test_gateway_secret_rule_stays_for_the_lab_audit() -> None:
    source = PolicySource(
        file="p.json",
        name="p",
        document=policy(allow("secretsmanager:GetSecretValue", Condition=TAG)),
    )
    lab = {f.rule for f in audit_sources([source], parliament=False) if f.severity == "error"}
    assert "gateway_secret_reach" in lab
    general = audit_sources([source], lab_rules=False, parliament=False)
    assert [f for f in general if f.severity == "error"] == []


def test_list_all_buckets_on_every_bucket_arn_is_no_resource_mismatch() -> None:
    # AWS's and Terraform's own example writes "arn:aws:s3:::*" where parliament wants "*".
    assert errors(allow(["s3:ListAllMyBuckets"], "arn:aws:s3:::*")) == set()
    assert "RESOURCE_MISMATCH" not in blocking_hits(allow("s3:ListAllMyBuckets", "arn:aws:s3:::*"))
    # a resource that names some things is still a grant that matches nothing
    assert "parliament:RESOURCE_MISMATCH" in errors(
        allow("iam:ListRoles", "arn:aws:iam::111122223333:role/*")
    )
    assert "parliament:RESOURCE_MISMATCH" in errors(allow("s3:GetObject", "arn:aws:s3:::bucket"))


def test_region_does_not_excuse_permissions_management() -> None:
    # RESOURCE_STAR is quiet (no data read), rewriting every bucket policy of a region is not
    hits = blocking_hits(allow("s3:PutBucketPolicy", Condition=REGION))
    assert "PERMISSIONS_MANAGEMENT_ACTIONS" in hits
    tagged = blocking_hits(allow("s3:PutBucketPolicy", Condition=TAG))
    assert "PERMISSIONS_MANAGEMENT_ACTIONS" not in tagged
