"""``cadencia audit iam`` end to end: real parliament, real files, real exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[3]
FIXTURES = ROOT / "tests" / "fixtures" / "iam"
SEED = FIXTURES / "amplo-para-conseguir-agir.json"


def cadencia(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "backend.cli", "audit", "iam", *args],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_seed_policy_fails_naming_its_three_problems() -> None:
    result = cadencia(str(SEED))
    assert result.returncode == 1, result.stdout + result.stderr
    out = " ".join(result.stdout.split())
    assert "AmploParaConseguirAgir" in out
    # dynamodb:* is broad and mostly unused.
    assert 'action "dynamodb:*" grants every action of dynamodb' in out
    assert "uses only dynamodb:GetItem, dynamodb:PutItem, dynamodb:UpdateItem" in out
    # rds-db:connect on * logs in as any database user.
    assert "lets the role log in as ANY database user" in out
    # secretsmanager on * lets consulta read the gateway secret.
    assert "consultar-status-pedido and atualizar-cadastro too, can read the payment" in out
    assert "audit iam: FAIL" in out


def test_seed_policy_json_report() -> None:
    result = cadencia("--json", str(SEED))
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["verdict"] == "fail"
    rules = {f["rule"] for f in report["findings"] if f["severity"] == "error"}
    assert {
        "wildcard_action",
        "unused_grant",
        "rds_db_any_user",
        "secret_wildcard",
        "gateway_secret_reach",
    } <= rules
    assert all(f["statement"] == 'Sid "AmploParaConseguirAgir"' for f in report["findings"])


def test_least_privilege_policy_passes_and_tool_flag_applies(tmp_path: Path) -> None:
    assert cadencia(str(FIXTURES / "least-privilege-consulta.json")).returncode == 0
    # The same file declared as cadastro's: connecting as consulta's user is wrong.
    document = json.loads((FIXTURES / "least-privilege-consulta.json").read_text())
    (tmp_path / "p.json").write_text(json.dumps(document["PolicyDocument"]))
    result = cadencia("--tool", "cadastro", "--json", str(tmp_path / "p.json"))
    assert result.returncode == 1
    assert "wrong_db_user" in {f["rule"] for f in json.loads(result.stdout)["findings"]}


def test_unreadable_input_exits_2(tmp_path: Path) -> None:
    assert cadencia(str(tmp_path / "missing.json")).returncode == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{ nope")
    result = cadencia(str(bad))
    assert result.returncode == 2
    assert "not valid JSON" in result.stderr


def test_seed_terraform_fails() -> None:
    result = cadencia("--json", str(FIXTURES / "seed-terraform"))
    assert result.returncode == 1
    rules = {f["rule"] for f in json.loads(result.stdout)["findings"]}
    assert {"rds_db_arn_format", "missing_action"} <= rules


CORPUS = ROOT / "tests" / "fixtures" / "corpus" / "iam"


def _verdicts(paths: list[Path], *flags: str) -> dict[str, bool]:
    """Each file's verdict from one ``audit iam`` run over all of them: True when failed."""
    result = cadencia(*flags, "--json", "--", *map(str, paths))  # a name is never an option
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(result.stdout)
    failed = {f["file"] for f in report["findings"] if f["severity"] == "error"}
    return {str(p): str(p) in failed for p in paths}


def test_general_rules_on_the_public_iam_corpus_meet_the_floors() -> None:
    """``--general`` judges any service's policies as the gate does: on the corpus (AWS
    documentation, cloudsplaining and parliament shapes; JSON, CloudFormation and
    Terraform) precision and recall >= 0.95, one run per folder."""
    bad = sorted((CORPUS / "bad").iterdir())
    good = sorted((CORPUS / "good").iterdir())
    caught = _verdicts(bad, "--general")
    alarms = _verdicts(good, "--general")
    hits = sum(caught.values())
    false_alarms = [p for p, failed in alarms.items() if failed]
    precision = hits / (hits + len(false_alarms))
    recall = hits / len(bad)
    missed = [p for p, failed in caught.items() if not failed]
    assert precision >= 0.95, false_alarms
    assert recall >= 0.95, missed


def test_general_and_tool_together_are_a_usage_error() -> None:
    result = cadencia("--general", "--tool", "consulta", str(SEED))
    assert result.returncode == 2
    assert "give one or the other" in result.stderr


def test_lab_rules_still_apply_without_general() -> None:
    """Without ``--general`` a public read-only policy is judged as a Lab 87 tool role: its
    grants no tool uses fail it, and ``--general`` lets the same file pass."""
    policy = CORPUS / "good" / "aws-ec2-describe-readonly.json"
    assert cadencia(str(policy)).returncode == 1
    assert cadencia("--general", str(policy)).returncode == 0
