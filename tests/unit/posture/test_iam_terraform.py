"""Extracting policies and role attachments from Terraform, then auditing them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from backend.exceptions import PathError, ValidationError
from backend.posture.iam import audit_iam
from backend.posture.terraform import load_directory
from backend.posture.terraform_iam import extract_iam

FIXTURES = Path(__file__).parents[2] / "fixtures" / "iam"

# What the seed's directory lacked to resolve its references: with these defined,
# its rds-db:connect resources render as real cluster ARNs and must still fail.
SEED_SUPPORT = """
data "aws_rds_cluster" "erp" {
  cluster_identifier = "cadencia-erp"
}

resource "aws_secretsmanager_secret" "gateway_pagamento" {
  name = "cadencia/gateway-pagamento"
}
"""


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "main.tf").write_text(text)
    return tmp_path


def errors(path: Path) -> list[tuple[str | None, str]]:
    report = audit_iam([path])
    return [(f.role, f.rule) for f in report.findings if f.severity == "error"]


def test_seed_ferramentas_tf_fails_on_its_uncorrected_mistakes(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "seed-terraform" / "ferramentas.tf", tmp_path)
    (tmp_path / "support.tf").write_text(SEED_SUPPORT)
    report = audit_iam([tmp_path])
    assert report.verdict == "fail"
    found = {(f.role, f.rule) for f in report.findings if f.severity == "error"}
    for short in ("consulta", "reembolso", "cadastro"):
        assert (f"cadencia-agente-{short}-role", "rds_db_arn_format") in found
    assert ("cadencia-agente-consulta-role", "missing_action") in found
    assert ("cadencia-agente-cadastro-role", "missing_action") in found
    assert ("cadencia-agente-reembolso-role", "missing_action") not in found
    # The refund role's secret statement itself is right, and resolved.
    assert not any(f.rule == "unresolved_reference" for f in report.findings)
    assert ("cadencia-agente-reembolso-role", "gateway_secret_reach") not in found


def test_jsonencode_policy_resolves_role_locals_and_references(tmp_path: Path) -> None:
    write(
        tmp_path,
        SEED_SUPPORT
        + """
locals { ledger = aws_dynamodb_table.t.arn }
resource "aws_dynamodb_table" "t" { name = "cadencia-agente-execucoes" }
resource "aws_iam_role" "r" { name = "cadencia-agente-consulta-role" }
resource "aws_iam_role_policy" "p" {
  role = aws_iam_role.r.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Sid      = "Gw"
      Effect   = "Allow"
      Action   = ["secretsmanager:GetSecretValue", "dynamodb:GetItem"]
      Resource = [aws_secretsmanager_secret.gateway_pagamento.arn, local.ledger]
    }]
  })
}
""",
    )
    iam = extract_iam(load_directory(tmp_path))
    (source,) = iam.policies
    assert (source.role, source.tool) == (
        "cadencia-agente-consulta-role",
        "consultar-status-pedido",
    )
    assert source.document["Statement"][0]["Resource"] == [
        "arn:aws:secretsmanager:us-east-1:111122223333:secret:cadencia/gateway-pagamento-AbCdEf",
        "arn:aws:dynamodb:us-east-1:111122223333:table/cadencia-agente-execucoes",
    ]
    assert ("cadencia-agente-consulta-role", "gateway_secret_reach") in errors(tmp_path)


def test_policy_document_attached_through_managed_policy_and_lambda_tool(tmp_path: Path) -> None:
    write(
        tmp_path,
        """
resource "aws_iam_role" "r" { name = "role-a" }
resource "aws_lambda_function" "f" {
  function_name = "cadencia-emitir-reembolso"
  role          = aws_iam_role.r.arn
}
data "aws_iam_policy_document" "d" {
  statement {
    actions   = ["rds-db:connect"]
    resources = ["arn:aws:rds-db:us-east-1:111122223333:dbuser:cluster-X/*"]
  }
}
resource "aws_iam_policy" "p" { policy = data.aws_iam_policy_document.d.json }
resource "aws_iam_role_policy_attachment" "a" {
  role       = aws_iam_role.r.name
  policy_arn = aws_iam_policy.p.arn
}
resource "aws_iam_role_policy_attachment" "admin" {
  role       = aws_iam_role.r.name
  policy_arn = "arn:aws:iam::aws:policy/AdministratorAccess"
}
""",
    )
    iam = extract_iam(load_directory(tmp_path))
    (source,) = iam.policies
    assert (source.role, source.tool) == ("role-a", "emitir-reembolso")
    found = errors(tmp_path)
    assert ("role-a", "rds_db_any_user") in found
    assert ("role-a", "managed_policy") in found


def test_policy_that_cannot_be_evaluated_is_an_error(tmp_path: Path) -> None:
    write(
        tmp_path,
        """
resource "aws_iam_role" "r" { name = "cadencia-agente-cadastro-role" }
resource "aws_iam_role_policy" "p" {
  role   = aws_iam_role.r.id
  policy = templatefile("p.tpl", {})
}
""",
    )
    assert ("cadencia-agente-cadastro-role", "policy_not_evaluated") in errors(tmp_path)


def test_invalid_hcl_and_empty_directory_raise(tmp_path: Path) -> None:
    with pytest.raises(PathError):
        audit_iam([tmp_path])
    write(tmp_path, 'resource "aws_iam_role" "r" {')
    with pytest.raises(ValidationError):
        audit_iam([tmp_path])


def test_policy_document_renders_iam_variables_written_with_ampersand(tmp_path: Path) -> None:
    # The data source's own documentation: "&{aws:username}" becomes "${aws:username}".
    write(
        tmp_path,
        """
data "aws_iam_policy_document" "home" {
  statement {
    actions   = ["s3:GetObject"]
    resources = ["arn:aws:s3:::homes/home/&{aws:username}/*"]
  }
}

resource "aws_iam_policy" "home" {
  name   = "home"
  policy = data.aws_iam_policy_document.home.json
}
""",
    )
    (source,) = extract_iam(load_directory(tmp_path)).policies
    assert source.document["Statement"][0]["Resource"] == [
        "arn:aws:s3:::homes/home/${aws:username}/*"
    ]
    assert source.unresolved == []
