"""Evasions by file encoding, Dockerfile name and symlink, against the REAL scanners.

One directory holds every case and is scanned once (semgrep starts slowly); the
tests read that one report.
"""

from __future__ import annotations

import pytest

from backend.gates.runner import GateReport, run_gates

from .samples import FAKE_AWS_KEY

LATEST = "FROM python:latest\nUSER 10001\n"
CURL_SH = "RUN curl -fsSL https://get.example.com/install.sh | sh\n"
HEREDOC = "FROM python:3.12-slim\nCOPY <<EOF /app/motd\nhello\nEOF\nUSER 10001\n"
NAMES = ("svc/dockerfile", "Dockerfile-prod", "app_Dockerfile", "x.dockerfile", "Containerfile")
BY_CONTENT = ("build/image.def", "build/odd[v1]*.img")  # no Dockerfile name; glob characters
ENV_SECRET = "ENV DB_PASSWORD=hunter2-hunter2\n"


@pytest.fixture(scope="module")
def report(scanners: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> GateReport:
    root = tmp_path_factory.mktemp("evasions")
    line = f'aws_key = "{FAKE_AWS_KEY}"\n'
    files: dict[str, bytes] = {
        "config/latin.env": b"caf\xe9 " + line.encode(),
        "scripts/profile.ps1": line.encode("utf-16"),
        "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00" + FAKE_AWS_KEY.encode() + b"\x00\x01",
        "build/image.txt": b"# syntax=docker/dockerfile:1\n" + LATEST.encode(),
        "shared/base.txt": b"FROM python:3.12-slim\nUSER root\n",
        **{name: (LATEST + CURL_SH).encode() for name in NAMES},
        **{name: (LATEST + CURL_SH + ENV_SECRET).encode() for name in BY_CONTENT},
        "heredoc/ok/Dockerfile": HEREDOC.encode(),
        "heredoc/root/Dockerfile": HEREDOC.replace("10001", "0").encode(),
    }
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    (root / "deploy").mkdir()
    (root / "deploy" / "Dockerfile").symlink_to("../shared/base.txt")
    (root / "keys").mkdir()
    (root / "keys" / "host.pem").symlink_to("/etc/hostname")
    return run_gates(root)


def rules_on(report: GateReport, file: str) -> set[tuple[str, str]]:
    return {(f.tool, f.rule) for f in report.findings if f.file == file}


@pytest.mark.parametrize("file", ["config/latin.env", "scripts/profile.ps1", "assets/logo.png"])
def test_a_key_is_found_in_any_encoding(report: GateReport, file: str) -> None:
    assert ("secret-regex", "aws-access-key-id") in rules_on(report, file)


@pytest.mark.parametrize("file", ["config/latin.env", "scripts/profile.ps1"])
def test_detect_secrets_sees_transcoded_text(report: GateReport, file: str) -> None:
    assert ("detect-secrets", "AWS Access Key") in rules_on(report, file)


@pytest.mark.parametrize("file", [*NAMES, "build/image.txt"])
def test_dockerfiles_by_any_name_or_by_content_are_linted(report: GateReport, file: str) -> None:
    assert {("hadolint", "DL3007"), ("dockerfile", "dockerfile-latest-tag")} <= rules_on(
        report, file
    )


@pytest.mark.parametrize("file", NAMES)
def test_semgrep_dockerfile_rules_see_every_name(report: GateReport, file: str) -> None:
    assert ("semgrep", "dockerfile-curl-pipe-shell") in rules_on(report, file)


@pytest.mark.parametrize("file", BY_CONTENT)
def test_semgrep_dockerfile_rules_see_a_dockerfile_known_by_its_content(
    report: GateReport, file: str
) -> None:
    assert {
        ("semgrep", "dockerfile-curl-pipe-shell"),
        ("semgrep", "dockerfile-secret-in-env"),
        ("semgrep", "hardcoded-credential-assignment"),
    } <= rules_on(report, file)


def test_a_symlink_inside_the_pr_is_scanned_under_its_name(report: GateReport) -> None:
    assert {
        ("workspace", "symlink-followed"),
        ("hadolint", "DL3002"),
        ("dockerfile", "dockerfile-root-user"),
    } <= rules_on(report, "deploy/Dockerfile")


def test_a_symlink_leaving_the_pr_blocks_and_is_reported(report: GateReport) -> None:
    assert rules_on(report, "keys/host.pem") == {("workspace", "symlink-outside-pr")}
    secops = report.gate("secops").to_json()
    assert secops["status"] == "fail"
    assert any(f["file"] == "keys/host.pem" for f in secops["findings"])  # type: ignore[attr-defined]
    assert report.verdict == "changes_requested"


def test_hadolint_failing_to_parse_a_heredoc_does_not_block_and_the_checks_still_run(
    report: GateReport,
) -> None:
    ok = {
        (f.tool, f.rule, f.severity) for f in report.findings if f.file == "heredoc/ok/Dockerfile"
    }
    assert ok == {("hadolint", "DL1000", "info")}
    assert ("dockerfile", "dockerfile-root-user") in rules_on(report, "heredoc/root/Dockerfile")
