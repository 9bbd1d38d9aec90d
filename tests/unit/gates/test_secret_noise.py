"""Which flagged values are digests, ids or references (pure, no scanner)."""

from __future__ import annotations

import hashlib

import pytest

from backend.gates.scanners.secret_noise import is_noise, is_reference_line

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
