"""deploy/terraform: fmt, init+validate against the local AWS provider, IAM audit.

No internet here: the AWS provider is read from a local plugin directory
(``CADENCIA_TF_PLUGIN_DIR``, default ``/opt/tf-plugins``, registry layout). With
``CI=true`` a missing terraform binary or provider FAILS the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from backend.posture.iam import audit_iam
from backend.posture.terraform import load_directory
from tests.conftest import require, require_binary

ROOT = Path(__file__).parents[3]
DEPLOY = ROOT / "deploy" / "terraform"
PLUGIN_DIR = Path(os.environ.get("CADENCIA_TF_PLUGIN_DIR", "/opt/tf-plugins"))


def terraform(binary: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CHECKPOINT_DISABLE": "1", "TF_IN_AUTOMATION": "1"}
    return subprocess.run(
        [binary, *args], check=False, cwd=cwd, env=env, capture_output=True, text=True, timeout=240
    )


@pytest.fixture(scope="module")
def terraform_bin() -> str:
    return require_binary("terraform")


def test_fmt_check(terraform_bin: str) -> None:
    result = terraform(terraform_bin, "fmt", "-check", "-diff", "-recursive", cwd=DEPLOY)
    assert result.returncode == 0, result.stdout + result.stderr


def test_init_and_validate_in_a_copy(terraform_bin: str, tmp_path: Path) -> None:
    providers = list(
        PLUGIN_DIR.glob("registry.terraform.io/hashicorp/aws/*/*/terraform-provider-aws*")
    )
    require(bool(providers), f"the AWS provider under {PLUGIN_DIR}")
    work = tmp_path / "terraform"
    shutil.copytree(DEPLOY, work, ignore=shutil.ignore_patterns(".terraform*", "*.tfstate*"))
    init = terraform(
        terraform_bin,
        "init",
        "-backend=false",
        "-input=false",
        "-no-color",
        f"-plugin-dir={PLUGIN_DIR}",
        cwd=work,
    )
    assert init.returncode == 0, init.stdout + init.stderr
    validate = terraform(terraform_bin, "validate", "-no-color", cwd=work)
    assert validate.returncode == 0, validate.stdout + validate.stderr
    assert "Warning" not in validate.stdout


def test_iam_audit_passes_on_the_deployment() -> None:
    report = audit_iam([DEPLOY])
    assert report.verdict == "pass", [f.message for f in report.findings]
    assert report.findings == []
    assert sorted((p.role, p.tool) for p in report.policies) == [
        ("cadencia-agente-cadastro-role", "atualizar-cadastro"),
        ("cadencia-agente-consulta-role", "consultar-status-pedido"),
        ("cadencia-agente-reembolso-role", "emitir-reembolso"),
    ]
    assert all(not p.unresolved for p in report.policies)


def test_only_the_refund_role_reads_the_gateway_secret() -> None:
    report = audit_iam([DEPLOY])
    readers = {
        p.role
        for p in report.policies
        if "LerSegredoDoGateway" in Path(p.file).read_text() and "reembolso" in p.policy
    }
    assert readers == {"cadencia-agente-reembolso-role"}
    text = (DEPLOY / "iam.tf").read_text()
    assert text.count("secretsmanager:GetSecretValue") == 1


def test_ledger_table_supports_the_counter_and_claims() -> None:
    config = load_directory(DEPLOY)
    table = config.blocks["aws_dynamodb_table.execucoes"].body
    assert table["hash_key"] == "pk"
    assert "range_key" not in table
    assert table["attribute"] == [{"name": "pk", "type": "S"}]
    assert table["ttl"] == [{"attribute_name": "expira_em", "enabled": True}]
    assert table["point_in_time_recovery"] == [{"enabled": True}]
    assert table["server_side_encryption"][0]["enabled"] is True


def test_alarm_watches_interrupcoes_por_teto_per_tool() -> None:
    config = load_directory(DEPLOY)
    alarm = config.blocks["aws_cloudwatch_metric_alarm.interrupcoes_por_teto"].body
    assert alarm["namespace"] == "Cadencia/AgenteAtendimento"
    assert alarm["metric_name"] == "InterrupcoesPorTeto"
    assert alarm["dimensions"] == {"Ferramenta": "${each.key}"}
    assert alarm["alarm_actions"] == ["${var.topico_alarmes_arn}"]


def test_audit_catches_a_regression_in_the_deployment(tmp_path: Path) -> None:
    work = tmp_path / "terraform"
    shutil.copytree(DEPLOY, work, ignore=shutil.ignore_patterns(".terraform*"))
    iam = work / "iam.tf"
    text = iam.read_text()
    anchor = 'data "aws_iam_policy_document" "agente_consulta" {\n'
    assert anchor in text
    leak = """  statement {
    actions   = ["secretsmanager:GetSecretValue", "dynamodb:Scan"]
    resources = [aws_secretsmanager_secret.gateway_pagamento.arn, local.ledger_arn]
  }
"""
    iam.write_text(text.replace(anchor, anchor + leak))
    report = audit_iam([work])
    assert report.verdict == "fail"
    found = {(f.role, f.rule) for f in report.findings if f.severity == "error"}
    assert ("cadencia-agente-consulta-role", "gateway_secret_reach") in found
    assert ("cadencia-agente-consulta-role", "unused_grant") in found
