"""Each IAM rule on small in-memory policies (parliament's pure action tables only)."""

from __future__ import annotations

from typing import Any

from backend.posture.iam import audit_sources
from backend.posture.iam_model import IamFinding, PolicySource, Tool
from backend.posture.iam_rules import check_role

DBUSER = "arn:aws:rds-db:us-east-1:111122223333:dbuser:cluster-ABCDEFGHIJKL0123456789"
LEDGER = "arn:aws:dynamodb:us-east-1:111122223333:table/cadencia-agente-execucoes"
SECRETS = "arn:aws:secretsmanager:us-east-1:111122223333:secret:"
GATEWAY = SECRETS + "cadencia/gateway-pagamento-AbCdEf"
LEDGER_ACTIONS = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"]


def stmt(actions: Any, resources: Any, sid: str = "S", **extra: Any) -> dict[str, Any]:
    return {"Sid": sid, "Effect": "Allow", "Action": actions, "Resource": resources, **extra}


def audit(
    *statements: dict[str, Any], tool: Tool | None = "consultar-status-pedido"
) -> list[IamFinding]:
    source = PolicySource(
        file="p.json",
        name="p",
        document={"Version": "2012-10-17", "Statement": list(statements)},
        role="role-x",
        tool=tool,
    )
    return [f for f in audit_sources([source]) if f.severity == "error"]


def rules(findings: list[IamFinding]) -> set[str]:
    return {f.rule for f in findings}


def least_privilege(short: str) -> list[dict[str, Any]]:
    return [
        stmt("rds-db:connect", f"{DBUSER}/cadencia_agente_{short}", "Db"),
        stmt(LEDGER_ACTIONS, LEDGER, "Ledger"),
    ]


def test_least_privilege_policy_of_each_tool_passes() -> None:
    assert audit(*least_privilege("consulta")) == []
    assert audit(*least_privilege("cadastro"), tool="atualizar-cadastro") == []
    refund = [
        *least_privilege("reembolso"),
        stmt("secretsmanager:GetSecretValue", SECRETS + "cadencia/gateway-pagamento-??????", "Gw"),
    ]
    assert audit(*refund, tool="emitir-reembolso") == []


def test_service_wildcard_action_is_flagged_as_wildcard_and_unused() -> None:
    findings = audit(stmt("dynamodb:*", LEDGER))
    assert rules(findings) >= {"wildcard_action", "unused_grant"}
    unused = next(f for f in findings if f.rule == "unused_grant")
    assert "uses only dynamodb:GetItem, dynamodb:PutItem, dynamodb:UpdateItem" in unused.message
    assert unused.statement == 'Sid "S"'


def test_star_action_is_flagged() -> None:
    findings = audit(stmt("*", LEDGER))
    assert "wildcard_action" in rules(findings)
    assert any('"*" grants every action of every service' in f.message for f in findings)


def test_resource_star_on_data_action_is_flagged() -> None:
    findings = audit(stmt(LEDGER_ACTIONS, "*"))
    assert rules(findings) >= {"resource_star"}
    assert "name the ledger table's ARN" in next(
        f.message for f in findings if f.rule == "resource_star"
    )


def test_rds_connect_on_star_lets_any_user_log_in() -> None:
    findings = audit(stmt("rds-db:connect", "*"))
    assert "rds_db_any_user" in rules(findings)
    assert any("ANY database user" in f.message for f in findings)


def test_wildcard_db_user_part_is_flagged() -> None:
    assert "rds_db_any_user" in rules(audit(stmt("rds-db:connect", f"{DBUSER}/*")))
    wildcard_cluster = "arn:aws:rds-db:us-east-1:111122223333:dbuser:*/cadencia_agente_consulta"
    assert "rds_db_any_user" in rules(audit(stmt("rds-db:connect", wildcard_cluster)))


def test_cluster_arn_instead_of_dbuser_arn_is_flagged() -> None:
    cluster = "arn:aws:rds:us-east-1:111122223333:cluster:erp/cadencia_agente_consulta"
    findings = audit(stmt("rds-db:connect", cluster))
    assert "rds_db_arn_format" in rules(findings)
    assert any("cluster resource id, not the cluster ARN" in f.message for f in findings)


def test_connecting_as_another_tools_user_is_flagged() -> None:
    findings = audit(stmt("rds-db:connect", f"{DBUSER}/cadencia_agente_reembolso"))
    assert rules(findings) == {"wrong_db_user"}
    assert "'cadencia_agente_consulta'" in findings[0].message


def test_wildcard_secret_arn_is_flagged_and_reaches_the_gateway() -> None:
    findings = audit(stmt("secretsmanager:GetSecretValue", SECRETS + "cadencia/*"))
    assert rules(findings) >= {"secret_wildcard", "gateway_secret_reach", "unused_grant"}


def test_refund_role_may_use_the_exact_suffix_but_not_a_name_wildcard() -> None:
    wildcard = stmt("secretsmanager:GetSecretValue", SECRETS + "cadencia/gateway-*")
    assert rules(audit(*least_privilege("reembolso"), wildcard, tool="emitir-reembolso")) == {
        "secret_wildcard"
    }


def test_consulta_role_reaching_the_gateway_secret_fails() -> None:
    findings = audit(stmt("secretsmanager:GetSecretValue", GATEWAY))
    assert "gateway_secret_reach" in rules(findings)
    reach = next(f for f in findings if f.rule == "gateway_secret_reach")
    assert "consultar-status-pedido" in reach.message
    assert "only emitir-reembolso's role may" in reach.message


def test_refund_role_reaching_the_gateway_secret_is_fine() -> None:
    refund = stmt("secretsmanager:GetSecretValue", GATEWAY)
    assert audit(*least_privilege("reembolso"), refund, tool="emitir-reembolso") == []


def test_action_the_tool_never_uses_is_flagged() -> None:
    findings = audit(stmt("s3:GetObject", "arn:aws:s3:::bucket/key"))
    assert rules(findings) == {"unused_grant"}
    assert "never used by tool consultar-status-pedido" in findings[0].message


def test_not_action_with_allow_is_flagged() -> None:
    statement = {"Sid": "N", "Effect": "Allow", "NotAction": "iam:*", "Resource": LEDGER}
    assert "not_element_allow" in rules(audit(statement))


def test_deny_statements_are_not_violations() -> None:
    deny = {"Sid": "D", "Effect": "Deny", "Action": "*", "Resource": "*"}
    assert audit(*least_privilege("consulta"), deny) == []


def test_unknown_action_and_prefix_fail_through_parliament() -> None:
    findings = audit(stmt(["dynamodb:GetItme"], LEDGER), stmt(["dinamodb:GetItem"], LEDGER, "T"))
    assert {"parliament:UNKNOWN_ACTION", "parliament:UNKNOWN_PREFIX"} <= rules(findings)
    unknown = next(f for f in findings if f.rule == "parliament:UNKNOWN_ACTION")
    assert unknown.statement == 'Sid "S"'
    assert "dynamodb:GetItme" in unknown.message


def test_role_missing_update_item_fails_the_role_rule() -> None:
    source = PolicySource(
        file="x.tf",
        name="p",
        document={"Statement": [stmt(["dynamodb:GetItem", "dynamodb:PutItem"], LEDGER)]},
        role="r",
        tool="consultar-status-pedido",
    )
    (finding,) = check_role("x.tf", "r", [source])
    assert finding.rule == "missing_action"
    assert "dynamodb:UpdateItem" in finding.message
    assert "rds-db:connect" in finding.message
