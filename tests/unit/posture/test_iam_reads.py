"""``audit iam`` says what it read and reads IAM wherever it is written (issue 15.2/15.4).

In-process through ``backend.cli.main`` (the exit code and stderr are the contract);
the policies are tiny and avoid ``Action "*"`` so parliament stays fast.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.cli import main
from backend.posture.iam import audit_iam

BROAD = (
    '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", '
    '"Resource": "*"}]}'
)
SCOPED = (
    '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "dynamodb:GetItem", '
    '"Resource": "arn:aws:dynamodb:us-east-1:111122223333:table/t"}]}'
)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["audit", "iam", *args])
    out, err = capsys.readouterr()
    return code, " ".join(out.split()), err


def errors(path: Path) -> set[tuple[str, str]]:
    report = audit_iam([path])
    return {(f.policy, f.rule) for f in report.findings if f.severity == "error"}


def test_no_policy_found_is_its_own_exit_code(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "package.json").write_text('{"name": "app"}')
    tf = tmp_path / "tf"
    tf.mkdir()
    (tf / "main.tf").write_text('resource "aws_s3_bucket" "b" {\n  bucket = "x"\n}\n')
    for target in (tmp_path / "empty.json", tmp_path / "package.json", tf):
        code, out, err = run(capsys, str(target))
        assert code == 3, (target, out, err)
        assert "no policy found" in out
        assert "pass" not in out


def test_policies_per_file_are_reported(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "a.json").write_text(SCOPED)
    (tmp_path / "none.json").write_text("[]")
    code, out, _ = run(capsys, str(tmp_path / "a.json"), str(tmp_path / "none.json"))
    assert code == 0
    assert "a.json — 1 policies, 0 errors" in out
    assert "none.json — no policy found" in out
    assert "(1 policies in 2 files)" in out
    report = audit_iam([tmp_path / "a.json", tmp_path / "none.json"])
    assert [(Path(r.file).name, r.policies) for r in report.files] == [
        ("a.json", 1),
        ("none.json", 0),
    ]


@pytest.mark.parametrize(
    "content",
    [b"\x00\x01\xff\xfe\x00binary", b"{ nope", b'{"Statement": 5}', b"\xef\xbb\xbf"],
    ids=["binary", "broken-json", "statement-not-list", "bom-only"],
)
def test_no_traceback_on_any_input(tmp_path: Path, capsys, content: bytes) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "p.json"
    target.write_bytes(content)
    code, out, err = run(capsys, str(target))
    assert code in (2, 3), (out, err)
    assert "Traceback" not in out + err


def test_broken_hcl_and_malformed_action_give_no_traceback(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "main.tf").write_text('resource "aws_iam_policy" "p" {\n  policy = \n')
    code, _, err = run(capsys, str(tmp_path))
    assert code == 2
    assert "not valid HCL" in err
    bad = tmp_path / "p.json"
    bad.write_text('{"Statement": [{"Effect": "Allow", "Action": "s3GetObject", "Resource": "*"}]}')
    code, out, err = run(capsys, str(bad))
    assert code == 1, out + err
    assert "Traceback" not in out + err


def test_typo_action_is_a_finding(tmp_path: Path) -> None:
    target = tmp_path / "p.json"
    target.write_text(SCOPED.replace("GetItem", "GetItemm"))
    assert ("p.json", "parliament:UNKNOWN_ACTION") in errors(target)


def test_bom_and_utf16_policies_are_read(tmp_path: Path) -> None:
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + BROAD.encode())
    (tmp_path / "u16.json").write_bytes(BROAD.encode("utf-16"))
    for name in ("bom.json", "u16.json"):
        assert (name, "wildcard_action") in errors(tmp_path / name)


def test_cloudformation_policies_are_read(tmp_path: Path) -> None:
    template = {
        "Resources": {
            "P": {
                "Type": "AWS::IAM::ManagedPolicy",
                "Properties": {"PolicyDocument": json.loads(BROAD)},
            },
            "R": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "ManagedPolicyArns": ["arn:aws:iam::aws:policy/AdministratorAccess"]
                },
            },
        }
    }
    (tmp_path / "t.json").write_text(json.dumps(template))
    found = errors(tmp_path / "t.json")
    assert ("AWS::IAM::ManagedPolicy P", "wildcard_action") in found
    assert ("AWS::IAM::Role R", "managed_policy") in found
    (tmp_path / "t.yaml").write_text(
        "Resources:\n  R:\n    Type: AWS::IAM::Role\n    Properties:\n      Policies:\n"
        "        - PolicyName: p\n          PolicyDocument:\n            Statement:\n"
        "              - Effect: Allow\n                Action: dynamodb:*\n"
        "                Resource: !GetAtt Table.Arn\n"
    )
    assert ("AWS::IAM::Role R policy p", "wildcard_action") in errors(tmp_path / "t.yaml")


def test_terraform_users_groups_attachments_modules(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'resource "aws_iam_user_policy" "u" {\n  user = "ci"\n'
        f"  policy = <<EOF\n{BROAD}\nEOF\n}}\n"
        'resource "aws_iam_group_policy" "g" {\n  group = "devs"\n'
        f"  policy = <<EOF\n{BROAD}\nEOF\n}}\n"
        'resource "aws_iam_user_policy_attachment" "ua" {\n  user = "ci"\n'
        '  policy_arn = "arn:aws:iam::aws:policy/PowerUserAccess"\n}\n'
        'resource "aws_iam_role" "r" {\n  name = "r"\n'
        '  managed_policy_arns = ["arn:aws:iam::aws:policy/AdministratorAccess"]\n}\n'
        'module "m" {\n  source = "./x"\n'
        '  attach = ["arn:aws:iam::aws:policy/IAMFullAccess"]\n}\n'
    )
    found = errors(tmp_path / "main.tf")
    assert {
        ("aws_iam_user_policy.u", "wildcard_action"),
        ("aws_iam_group_policy.g", "wildcard_action"),
        ("aws_iam_user_policy_attachment.ua", "managed_policy"),
        ("aws_iam_role.r", "managed_policy"),
        ("module.m.attach[0]", "managed_policy"),
    } <= found


def test_for_each_is_evaluated_or_reported(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(
        'resource "aws_iam_role_policy" "p" {\n  for_each = toset(["s3", "sqs"])\n  role = "r"\n'
        '  policy = jsonencode({ Version = "2012-10-17", Statement = [{ Effect = "Allow", '
        'Action = "${each.key}:*", Resource = "*" }] })\n}\n'
        'resource "aws_iam_role_policy" "q" {\n  for_each = aws_s3_bucket.all\n  role = "r"\n'
        f"  policy = <<EOF\n{SCOPED}\nEOF\n}}\n"
    )
    report = audit_iam([tmp_path])
    assert sorted(p.policy for p in report.policies) == [
        'aws_iam_role_policy.p["s3"]',
        'aws_iam_role_policy.p["sqs"]',
    ]
    found = {(f.policy, f.rule) for f in report.findings if f.severity == "error"}
    assert ('aws_iam_role_policy.p["sqs"]', "wildcard_action") in found
    assert ("aws_iam_role_policy.q", "policy_not_evaluated") in found
