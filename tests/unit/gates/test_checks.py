"""Built-in checks on strings: Dockerfile, compose, secret regexes."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.gates.scanners.compose import check_compose, published_on_all_interfaces
from backend.gates.scanners.dockerfile import check_dockerfile
from backend.gates.scanners.regex_secrets import find_secrets


def rules(findings: list) -> list[tuple[str, int | None]]:  # type: ignore[type-arg]
    return [(f.rule, f.line) for f in findings]


GOOD_DOCKERFILE = """\
ARG PY=3.12
FROM python:${PY}-slim AS build
RUN pip install --no-cache-dir build
FROM build
COPY --chown=10001:10001 . /app
USER 10001:10001
"""


def test_clean_multistage_dockerfile_has_no_findings() -> None:
    assert check_dockerfile(GOOD_DOCKERFILE) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("FROM python:latest\nUSER 1000\n", [("dockerfile-latest-tag", 1)]),
        ("FROM python\nUSER 1000\n", [("dockerfile-untagged-image", 1)]),
        ("FROM localhost:5000/img\nUSER 1000\n", [("dockerfile-untagged-image", 1)]),
        ("FROM python:3.12\n", [("dockerfile-no-user", 1)]),
        ("FROM python:3.12\nUSER 1000\nUSER root\n", [("dockerfile-root-user", 3)]),
        ("FROM python:3.12\nUSER 0:0\n", [("dockerfile-root-user", 2)]),
        ("FROM python:3.12 AS b\nUSER 1000\nFROM alpine:3.20\n", [("dockerfile-no-user", 3)]),
        (
            "FROM python:3.12\nADD https://x.example/a.tgz /opt/\nUSER 1\n",
            [("dockerfile-add-url", 2)],
        ),
        ("FROM python:3.12\nADD --checksum=sha256:ab https://x/a /a\nUSER 1\n", []),
        ("FROM python:3.12\nADD a.tgz /opt/\nUSER 1\n", []),
        ("FROM python@sha256:0123\nUSER 1\n", []),
        ("FROM scratch\nUSER 65534\n", []),
    ],
)
def test_dockerfile_checks(text: str, expected: list[tuple[str, int]]) -> None:
    found = check_dockerfile(text, "svc/Dockerfile")
    assert rules(found) == expected
    assert all(f.file == "svc/Dockerfile" and f.tool == "dockerfile" for f in found)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("FROM a:1\nUSER 00\n", [("dockerfile-root-user", 2)]),
        ("FROM a:1\nUSER +0\n", [("dockerfile-root-user", 2)]),
        ("FROM a:1\nUSER 0:0\n", [("dockerfile-root-user", 2)]),
        ("FROM a:1\nUSER root:root\n", [("dockerfile-root-user", 2)]),
        ("from a:1\nuser 0\n", [("dockerfile-root-user", 2)]),
        ("ARG U=root\nFROM a:1\nARG U\nUSER $U\n", [("dockerfile-root-user", 4)]),
        ("FROM a:1\nARG U\nUSER ${U:-root}\n", [("dockerfile-root-user", 3)]),
        ("FROM a:1\nARG U=\nUSER ${U:-0}\n", [("dockerfile-root-user", 3)]),
        ("FROM a:1\nENV U=0\nUSER ${U}:${U}\n", [("dockerfile-root-user", 3)]),
        ("FROM a:1\nENV U root\nUSER $U\n", [("dockerfile-root-user", 3)]),
        ("FROM a:1 AS base\nENV U=0\nFROM base\nUSER $U\n", [("dockerfile-root-user", 4)]),
        ("FROM a:1 AS b\nUSER 0\nFROM b AS c\nFROM c\n", [("dockerfile-root-user", 2)]),
        ("FROM a:1\nARG U\nUSER $U\n", [("dockerfile-user-unresolved", 3)]),
        ("ARG U=1000\nFROM a:1\nUSER $U\n", [("dockerfile-user-unresolved", 3)]),
        ("FROM a:1\nUSER ${U#x}\n", [("dockerfile-user-unresolved", 2)]),
        ("FROM a:1\nRUN <<EOF\nUSER 1000\nEOF\n", [("dockerfile-no-user", 1)]),
        ("FROM gcr.io/distroless/static:nonroot\nUSER root\n", [("dockerfile-root-user", 2)]),
        ("FROM gcr.io/distroless/static-debian12:debug\n", [("dockerfile-no-user", 1)]),
        ("FROM cgr.dev/chainguard/wolfi-base:1\n", [("dockerfile-no-user", 1)]),
    ],
)
def test_root_is_found_however_it_is_spelled(text: str, expected: list[tuple[str, int]]) -> None:
    assert rules(check_dockerfile(text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "FROM gcr.io/distroless/static-debian12:nonroot\n",
        "FROM gcr.io/distroless/python3-debian12:debug-nonroot\n",
        "FROM gcr.io/distroless/base:nonroot@sha256:0123\n",
        "FROM cgr.dev/chainguard/python:3.12\n",
        "FROM python:3.12 AS base\nUSER 10001\nFROM base\nRUN echo hi\n",
        "FROM python:3.12 AS b\nUSER 10001\nFROM b AS c\nFROM c\n",
        "FROM a:1\nARG U=10001\nUSER $U\n",
        "FROM a:1\nARG U\nUSER ${U:-10001}\n",
        "ARG U=10001\nFROM a:1\nARG U\nUSER ${U}:${U}\n",
        "FROM a:1\nENV HOME=/app UID=10001\nUSER $UID\n",
        "FROM python:3.12\nCOPY <<EOF /app/x\nUSER root\nEOF\nUSER 10001\n",
        "FROM python:3.12\nRUN <<-EOT bash\n\tUSER 0\n\tEOT\nUSER app\n",
    ],
)
def test_non_root_final_images_are_not_flagged(text: str) -> None:
    assert check_dockerfile(text) == []


@pytest.mark.parametrize(
    ("spec", "exposed"),
    [
        ("8000", True),
        ("8000:8000", True),
        ("8000:8000/udp", True),
        ("0.0.0.0:8000:8000", True),
        ("[::]:80:80", True),
        ("127.0.0.1:8000:8000", False),
        ("[::1]:80:80", False),
        ("10.1.2.3:80:80", False),
        ("localhost:80:80", False),
    ],
)
def test_port_binding(spec: str, exposed: bool) -> None:
    assert published_on_all_interfaces(spec) is exposed


BAD_COMPOSE = """\
x-common: &common
  privileged: true
services:
  api:
    <<: *common
    image: api:1.0
    network_mode: host
    ports:
      - "8000:8000"
      - "127.0.0.1:9000:9000"
      - target: 80
        published: 8080
    volumes:
      - /var/run/docker.sock:/var/run/docker.sock:ro
      - type: bind
        source: /run/docker.sock
        target: /sock
"""


def test_compose_checks_find_each_problem_with_its_line() -> None:
    assert rules(check_compose(BAD_COMPOSE)) == [
        ("compose-privileged", 2),
        ("compose-host-network", 7),
        ("compose-port-all-interfaces", 9),
        ("compose-port-all-interfaces", 11),
        ("compose-docker-socket", 14),
        ("compose-docker-socket", 15),
    ]


def test_clean_compose_passes() -> None:
    text = """\
services:
  db:
    image: postgres:16.4
    ports: ["127.0.0.1:5432:5432"]
    volumes: [pgdata:/var/lib/postgresql/data]
    privileged: false
volumes:
  pgdata: {}
"""
    assert check_compose(text) == []


def test_invalid_compose_yaml_is_a_finding() -> None:
    (finding,) = check_compose("services: [", "compose.yaml")
    assert finding.rule == "compose-invalid-yaml"
    assert finding.blocking


def test_secret_regexes() -> None:
    text = (
        "a=1\n"
        "AWS_ACCESS_KEY_ID=AKIA" + "Q7RZ3M5X2KD8HT4W\n"
        'aws_secret_access_key = "' + "Jx8qP2vR7mT4kW9zB3nC6dF1hL5sA0eY2uI7oG4t" + '"\n'
        "-----BEGIN " + "RSA PRIVATE KEY-----\n"
        # AWS's published example pair is not a secret (secret_noise.PUBLISHED_EXAMPLES)
        "AWS_ACCESS_KEY_ID=AKIA" + "IOSFODNN7EXAMPLE\n"
        'aws_secret_access_key = "' + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" + '"\n'
    )
    assert rules(find_secrets(text, "x.env")) == [
        ("aws-access-key-id", 2),
        ("aws-secret-access-key", 3),
        ("private-key", 4),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "AKIA" + "ABCDEFGHIJKLMNO",  # 15 chars: too short
        "XAKIA" + "ABCDEFGHIJKLMNOP",  # part of a longer token
        "-----BEGIN PUBLIC KEY-----",
        "aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}",
    ],
)
def test_secret_regexes_ignore_lookalikes(text: str) -> None:
    assert find_secrets(text) == []


def test_iam_floor_catches_what_parliament_misses() -> None:
    from backend.gates.scanners.iam_floor import check_policy

    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "Admin", "Effect": "Allow", "Action": "*", "Resource": "*"},
            {"Effect": "Allow", "NotAction": "s3:*", "Resource": "*"},
            {"Effect": "Deny", "Action": "*", "Resource": "*"},
            {"Effect": "Allow", "Action": ["dynamodb:GetItem"], "Resource": "arn:x"},
        ],
    }
    assert [(f.rule, f.message) for f in check_policy(policy)] == [
        ("iam-action-star", "statement Admin allows every action ('*')"),
        ("iam-allow-notaction", "statement 1 uses Allow with NotAction: it grants everything else"),
    ]
    assert check_policy({"Statement": {"Effect": "Allow", "Action": "s3:GetObject"}}) == []


def test_iam_floor_reads_only_terraform_folders_that_can_hold_iam(tmp_path: Path) -> None:
    """A folder of .tf files with no aws_iam_*, policy, Statement or module is not parsed
    (python-hcl2 costs a third of a second per tree); any of those words makes it a target."""
    from backend.gates.scanners import iam_floor
    from backend.gates.scanners._base import ScanContext

    files = {
        "net/main.tf": 'resource "null_resource" "x" {\n  triggers = { a = "b" }\n}\n',
        "roles/main.tf": 'resource "aws_iam_role" "r" {\n  name = "r"\n}\n',
        "bucket/main.tf": 'resource "aws_s3_bucket_policy" "p" {\n  bucket = "b"\n}\n',
        "mods/main.tf": 'module "ci" {\n  source = "./m"\n  arns = ["arn:aws:iam::aws:x"]\n}\n',
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    ctx = ScanContext(root=tmp_path, files=tuple(sorted(files)))
    assert iam_floor.targets(ctx) == ["bucket", "mods", "roles"]
