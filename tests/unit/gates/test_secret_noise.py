"""Which flagged values are digests, ids, references, placeholders, published example keys
or PEM bodies (pure, no scanner), and that the same shapes with real values stay secrets."""

from __future__ import annotations

import hashlib

import pytest

from backend.gates.scanners.secret_noise import (
    is_key_fingerprint,
    is_noise,
    is_placeholder,
    is_published_example,
    is_reference,
    is_reference_line,
    not_a_secret,
    pem_noise_lines,
    private_key_start,
)

HEX = "Hex High Entropy String"
B64 = "Base64 High Entropy String"


def sha1(value: str) -> str:
    return hashlib.sha1(value.encode()).hexdigest()


SRI = "sha384-1H217gwSVyLSIfaLxHbE7dRb3v4mYCKbpQvzx0cegeju1MVsGrX5xXxAvs/HgeFs"
KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8bLmN3"
AWS_ID = "AKIAZ7Q4X2M3N5P6R8T9"
SHA = "5a3f1b2c4d6e8f0a1b3c5d7e9f1a3b5c7d9e1f3a"
DIGEST = "8ef7b7c4b9c0c9d1a2f6d3e5a7b9c1d3e5f7a9b1c3d5e7f9a1b3c5d7e9f1a3b5"


@pytest.mark.parametrize(
    ("kind", "file", "line", "value"),
    [
        (B64, "index.html", f'<script src="x.js" integrity="{SRI}"></script>', SRI),
        (HEX, "app.py", f'commit = "{SHA}"', SHA),
        (HEX, "build.py", f'checksum = "{DIGEST}"', DIGEST),
        (HEX, "Dockerfile", f'ENV PYTHON_SHA256="{DIGEST}"', DIGEST),
        (HEX, ".github/workflows/ci.yml", f'      - uses: "actions/checkout@{SHA}"', SHA),
        (HEX, "alembic/versions/0001_initial.py", 'revision = "3c5b2f9a1d7e"', "3c5b2f9a1d7e"),
        (HEX, "alembic/versions/0002.py", 'down_revision = "3c5b2f9a1d7e"', "3c5b2f9a1d7e"),
        (HEX, "keys.txt", f'gpg_fingerprint = "{SHA}"', SHA),
        (HEX, "dist/app.tar.gz.sha256", f"{DIGEST}  app.tar.gz", DIGEST),
        (B64, "poetry.lock", f'hash = "sha256:{DIGEST}"', f"sha256:{DIGEST}"),
    ],
)
def test_digests_and_ids_are_noise(kind: str, file: str, line: str, value: str) -> None:
    assert is_noise(kind, file, line, sha1(value))


@pytest.mark.parametrize(
    ("kind", "file", "line", "value"),
    [
        (HEX, "app.py", f'token = "{SHA}"', SHA),  # a bare 40-hex is an old GitHub token
        (HEX, "app.py", f'x = "{SHA}"', SHA),
        (
            B64,
            "settings.py",
            'key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8bLmN3"',
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8bLmN3",
        ),
        (HEX, "app.py", f'commit = "{SHA}"', "not-the-flagged-value"),  # unsure: a secret
        (
            "AWS Access Key",
            "package-lock.json",
            '"k": "AKIAZ7Q4X2M3N5P6R8T9"',
            "AKIAZ7Q4X2M3N5P6R8T9",
        ),
    ],
)
def test_secrets_stay(kind: str, file: str, line: str, value: str) -> None:
    assert not is_noise(kind, file, line, sha1(value))


@pytest.mark.parametrize(
    "line",
    [
        "  password = random_password.db.result",
        "  master_password = var.db_password",
        "  secret_key = aws_secretsmanager_secret_version.app.secret_string",
        "      POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:?}",
        '      - "API_KEY=${API_KEY:?set API_KEY}"',
        "DB_PASSWORD=${DB_PASSWORD}",
        "password: ${{ secrets.DB_PASSWORD }}",
        'SECRET_KEY = os.environ["SECRET_KEY"]',
    ],
)
def test_references_are_not_hard_coded(line: str) -> None:
    assert is_reference_line(line)
    assert is_noise("Secret Keyword", "x", line, None)


@pytest.mark.parametrize(
    "line",
    [
        'password = "hunter2hunter2"',
        "POSTGRES_PASSWORD: ${POSTGRES_PASSWORD:-hunter2hunter2}",  # a default is a literal
        "password: correct-horse-battery",
    ],
)
def test_literals_are_hard_coded(line: str) -> None:
    assert not is_reference_line(line)


# --- by content only: placeholders, published examples, references (issue 33) -------------

REAL = "Jx8qP2vR7mT4kW9zB3nC6dF1hL5sA0eY2uI7oG4t"
"""A random value in the shape of an AWS secret access key: it must always stay a secret."""


@pytest.mark.parametrize(
    "value",
    [
        "changeme",
        "CHANGE_ME",
        "changeme-in-production",
        "<your-api-key>",
        "<password>",
        "[API_KEY]",
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "sk_live_xxxxxxxxxxxxxxxxxxxxxxxx",
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "AKIAXXXXXXXXXXXXXXXX",
        "********",
        "sk-...",
        "REPLACE_ME",
        "replace-with-your-key",
        "YOUR_API_KEY_HERE",
        "your-slack-token-here",
        "dummy-client-secret",
        "example-token-0000",
        "placeholder",
        "redacted",
        "password",
        "1234567890a",
        "%(db_password)s",
    ],
)
def test_placeholders_are_not_secrets(value: str) -> None:
    assert is_placeholder(value)
    assert not_a_secret(value)


@pytest.mark.parametrize(
    "value",
    [
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "AKIAI44QH8DHBEXAMPLE",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    ],
)
def test_published_example_keys_are_not_secrets(value: str) -> None:
    assert is_published_example(value)
    assert not_a_secret(value)


@pytest.mark.parametrize(
    "value",
    [
        "${DB_PASSWORD}",
        "postgres://app:${DB_PASSWORD}@db:5432/app",
        "${{ secrets.AWS_SECRET_ACCESS_KEY }}",
        "{{ .Values.postgresql.auth.password }}",
        "{{resolve:secretsmanager:prod/payments:SecretString:client_secret}}",
        "arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-Xk3p9Q",
        "arn:aws:ssm:eu-west-1:123456789012:parameter/prod/api_key",
        "vault:secret/data/orders/db#password",
        "ssm:/prod/payments/api_key",
        "op://prod/stripe/credential",
        "$(aws secretsmanager get-secret-value --secret-id prod/db)",
        "`gh auth token`",
        "get_secret_key()",
        "request.headers['apikey']",
    ],
)
def test_references_are_not_secrets(value: str) -> None:
    assert is_reference(value)
    assert not_a_secret(value)


@pytest.mark.parametrize(
    "value",
    [
        REAL,
        "AKIA4TROYB7HJBHFH3ZR",
        "ghp_R8kq2Wz7Lm4Xp9Tn3Vb6Yc1Hd5Jf0Gs2Qa7E",
        "sk_live_51HqT3kLm8Np2Qr4St6Uv8Wx0Yz2Ab4Cd6Ef8Gh0",
        "hunter2hunter2",
        "pg-Pr0d-2024-Xq7z",
        "${POSTGRES_PASSWORD:-Xy7pQ2mZ9vLw}",  # a default is a literal
        'Client(api_key="SG.WBDgTJOjeoUzbvfwjbUfrs.uMohyqeMT55XBrwqkd1gWojABnl5D")',
        "whywouldyouusehttpforpasswords",
    ],
)
def test_real_looking_values_stay_secrets(value: str) -> None:
    assert not not_a_secret(value)


def test_random_tokens_are_never_placeholders() -> None:
    import random
    import string

    rng = random.Random(33)
    alphabet = string.ascii_letters + string.digits + "+/_-"
    values = ["".join(rng.choice(alphabet) for _ in range(40)) for _ in range(3000)]
    assert [v for v in values if not_a_secret(v)] == []


@pytest.mark.parametrize(
    ("kind", "line", "value"),
    [
        ("AWS Access Key", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        ("GitHub Token", "GITHUB_TOKEN=ghp_" + "x" * 36, "ghp"),  # the detector hashes a prefix
        ("Secret Keyword", "password: changeme", "changeme"),
        ("Secret Keyword", "  password: vault:secret/data/db#password", "vault:secret/data/db"),
        ("Secret Keyword", "LLM_SECRET_NAME=NEXUS-GPT4-API-KEY", "NEXUS-GPT4-API-KEY"),
        ("Secret Keyword", "passwordVariable: 'PASSWORD'", "PASSWORD"),
        ("Base64 High Entropy String", f'  public_key: "{KEY}"', KEY),
        ("Base64 High Entropy String", f'  publicToken: "{KEY}"', KEY),
        ("Base64 High Entropy String", f"csrf-token={KEY}", KEY),
        ("Base64 High Entropy String", 'secret_key = "' + "x" * 40 + '"', "x" * 40),
    ],
)
def test_detect_secrets_noise_is_judged_on_the_flagged_value(
    kind: str, line: str, value: str
) -> None:
    assert is_noise(kind, "example.py", line, sha1(value))


@pytest.mark.parametrize(
    ("kind", "line", "value"),
    [
        ("AWS Access Key", "aws_access_key_id = AKIA4TROYB7HJBHFH3ZR", "AKIA4TROYB7HJBHFH3ZR"),
        ("GitHub Token", "GITHUB_TOKEN=ghp_R8kq2Wz7Lm4Xp9Tn3Vb6Yc1Hd5Jf0Gs2Qa7E", "ghp"),
        ("Secret Keyword", "password: Sup3rS3cret-Passw0rd", "Sup3rS3cret-Passw0rd"),
        ("Secret Keyword", "secret_name_is = Sup3rS3cret-Passw0rd", "Sup3rS3cret-Passw0rd"),
        ("Base64 High Entropy String", f'secret_key = "{REAL}"', REAL),
        ("Base64 High Entropy String", f'  private_key: "{KEY}"', KEY),
        ("Base64 High Entropy String", f'  republish_hook: "{KEY}"', KEY),
        ("Base64 High Entropy String", f'AUTH_HEADER="Bearer {KEY}"', KEY),
        ("Secret Keyword", "SECRET_VAR=Sup3rS3cret-Passw0rd", "Sup3rS3cret-Passw0rd"),
        (  # an example.com elsewhere on the line excuses nothing
            "Secret Keyword",
            "u = User({ email: 'a@example.com', password: 'Sup3rS3cret-Passw0rd' })",
            "Sup3rS3cret-Passw0rd",
        ),
    ],
)
def test_the_same_shapes_with_real_values_stay(kind: str, line: str, value: str) -> None:
    # file names never excuse a secret: example.py, test_x.py, *.example
    for file in ("example.py", "tests/test_upload.py", ".env.example", "docs/README.md"):
        assert not is_noise(kind, file, line, sha1(value)), file


def test_pem_bodies_and_certificates_are_noise_but_a_key_begin_line_is_not() -> None:
    lines = [
        "-----BEGIN CERTIFICATE-----",  # 1: public
        "MIIBszCCAVmgAwIBAgIUQ",  # 2
        "-----END CERTIFICATE-----",  # 3
        'key = "" +',  # 4
        '  "-----BEGIN RSA PRIVATE KEY-----\\n" +',  # 5: the key starts here
        '  "MIICXAIBAAKBgQDY0fgw933NS9EZOKVbO0jXHapg\\n" +',  # 6
        '  "-----END RSA PRIVATE KEY-----\\n"',  # 7
        "after = 1",  # 8
    ]
    assert pem_noise_lines(lines) == {1, 2, 3, 6, 7}
    assert private_key_start(lines, 4) == 5
    assert private_key_start(lines, 5) == 5
    assert private_key_start(lines, 8) is None


def test_a_key_after_a_certificate_on_the_same_line_is_not_noise() -> None:
    bundle = (
        '{"chain": "-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----\\n'
        '-----BEGIN PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----\\n"}'
    )
    assert pem_noise_lines([bundle]) == frozenset()
    assert private_key_start([bundle], 1) == 1


def test_a_yaml_block_scalar_key_is_moved_to_its_begin_line() -> None:
    lines = ["tls:", "  key: |", "    -----BEGIN EC PRIVATE KEY-----", "    MHcCAQEEIAL", "x"]
    assert private_key_start(lines, 2) == 3


def test_long_values_are_judged_in_linear_time() -> None:
    import time

    start = time.perf_counter()
    assert not not_a_secret("k7" * 100_000)  # a minified line, a blob: still judged
    assert not is_reference_line("password = " + "a1" * 100_000)
    assert time.perf_counter() - start < 2.0


def test_a_key_fingerprint_is_known_by_the_gpg_command_that_uses_it() -> None:
    fpr = "B97B0AFCAA1A47F044F244A07FCC7D46ACCC4CF8"
    lines = [f"\tkey='{fpr}'; \\", '\tgpg --batch --keyserver k --recv-keys "$key"; \\']
    assert is_key_fingerprint(fpr, lines, 1)
    spelled = ["#  Key = B97B 0AFC AA1A 47F0 44F2  44A0 7FCC 7D46 ACCC 4CF8", f"key='{fpr}'"]
    assert is_key_fingerprint(fpr, spelled, 2)
    # the same 40 hex digits with no gpg around: an old GitHub token looks like that
    assert not is_key_fingerprint(fpr, [f"github_token = '{fpr}'", "curl -H x"], 1)
    assert not is_key_fingerprint("Jx8qP2vR7mT4kW9z", lines, 1)  # not hex
