"""Secrets on the line they start, once, whatever scanners saw them (real scanners).

A multi-line private key is one finding at its BEGIN line (detect-secrets, the regex
floor and semgrep all match it); its body, a certificate and a public key are not
findings; placeholders, example keys and references are dropped by content, never by the
file's name, so the same shapes holding real-looking values are still found.
"""

from __future__ import annotations

import json
import secrets
import string

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from backend.gates.runner import GateResult, run_secops

SECRET_TOOLS = {"detect-secrets", "secret-regex", "semgrep"}


def _rsa_pem() -> list[str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=1024)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    return pem.decode().strip().splitlines()


def _ec_pem() -> list[str]:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return pem.decode().strip().splitlines()


def _random(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(n))


def _secret_lines(result: GateResult) -> dict[str, list[tuple[int | None, str]]]:
    out: dict[str, list[tuple[int | None, str]]] = {}
    for f in result.findings:
        if f.tool in SECRET_TOOLS and f.blocking:
            out.setdefault(f.file, []).append((f.line, f"{f.tool}:{f.rule}"))
    return out


@pytest.fixture(scope="module")
def keys_report(scanners: dict[str, str]) -> GateResult:
    rsa_rows, ec_rows = _rsa_pem(), _ec_pem()
    block = "\n".join("      " + r for r in ec_rows)
    go = "".join(f'\t"{r}\\n" +\n' for r in rsa_rows[:-1]) + f'\t"{rsa_rows[-1]}\\n"\n'
    quoted = "".join(f"    '{r}' \\\n" for r in rsa_rows)
    tree = {
        "deploy/tls.key": "\n".join(rsa_rows) + "\n",
        "chart/values.yaml": f"ingress:\n  tls:\n    key: |\n{block}\n",
        "signer/key.go": f'package signer\n\nconst key = "" +\n{go}',
        "Dockerfile": f"FROM alpine:3.20\nRUN printf '%s\\n' \\\n{quoted}    > /k\n",
        "sa.json": json.dumps({"type": "service_account", "private_key": "\n".join(ec_rows)}),
    }
    return run_secops(tree)


@pytest.mark.parametrize(
    ("file", "line"),
    [
        ("deploy/tls.key", 1),
        ("chart/values.yaml", 4),  # detect-secrets says 3 (the `key: |` line)
        ("signer/key.go", 4),
        ("Dockerfile", 3),
        ("sa.json", 1),
    ],
)
def test_a_private_key_is_one_finding_at_its_begin_line(
    keys_report: GateResult, file: str, line: int
) -> None:
    found = _secret_lines(keys_report).get(file, [])
    assert [n for n, _ in found] == [line], found


@pytest.fixture(scope="module")
def noise_report(scanners: dict[str, str]) -> GateResult:
    tree = {
        "example.py": (
            'AWS_ACCESS_KEY_ID = "AKIAIOSFODNN7EXAMPLE"\n'
            'AWS_SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"\n'
            'GITHUB_TOKEN = "ghp_' + "x" * 36 + '"\n'
        ),
        ".env.example": "DB_PASSWORD=changeme\nSECRET_KEY=<your-secret-key>\nAPI_KEY=REPLACE_ME\n",
        "values.yaml": (
            "auth:\n  password: vault:secret/data/db#password\n"
            '  api_key: "{{ .Values.apiKey }}"\n  client_secret: "********"\n'
        ),
        "deploy.sh": "export DB_PASSWORD=$(aws secretsmanager get-secret-value --secret-id db)\n",
        "task.json": json.dumps(
            {"valueFrom": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:db-Xk3p9Q"}
        ),
    }
    return run_secops(tree)


def test_placeholders_examples_and_references_are_not_findings(noise_report: GateResult) -> None:
    assert _secret_lines(noise_report) == {}


@pytest.fixture(scope="module")
def real_report(scanners: dict[str, str]) -> GateResult:
    aws_id = "AKIA" + _random(16, string.ascii_uppercase + "234567")
    aws_secret = _random(40, string.ascii_letters + string.digits + "+/")
    tree = {
        "example.py": (
            f'AWS_ACCESS_KEY_ID = "{aws_id}"\n'
            f'AWS_SECRET_ACCESS_KEY = "{aws_secret}"\n'
            f'GITHUB_TOKEN = "ghp_{_random(36)}"\n'
        ),
        ".env.example": f"DB_PASSWORD={_random(20)}\n",
        "tests/test_upload.py": f'KEY = "{aws_id}"\n',
        "values.yaml": f"auth:\n  password: {_random(20)}\n",
    }
    return run_secops(tree)


@pytest.mark.parametrize(
    ("file", "lines"),
    [
        ("example.py", [1, 2, 3]),
        (".env.example", [1]),
        ("tests/test_upload.py", [1]),
        ("values.yaml", [2]),
    ],
)
def test_the_same_shapes_with_real_values_are_found(
    real_report: GateResult, file: str, lines: list[int]
) -> None:
    found = _secret_lines(real_report).get(file, [])
    assert sorted({n for n, _ in found if n is not None}) == lines, found


def test_real_values_fail_the_gate(real_report: GateResult) -> None:
    assert real_report.status == "fail"
