"""Dockerfile verdicts with the real scanners: what the gates fail and what they pass.

A download that a pinned checksum or a signature verifies before it is extracted or run
passes both gates; the same download run, extracted or installed unverified fails, as does
a checksum that vouches for another file than the one used. hadolint's ``sudo`` (DL3004)
is reported and blocks whatever files named like hadolint's options sit beside it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.gates.runner import GateResult, run_gates, run_qa

from .conftest import write_tree

SHA = "ffb5f8de10c62550dfddab66b36b57030721e0a44a3218e9e1181d7b59f121ca"
URL = "https://dl.google.com/go/go1.26.7.linux-amd64.tar.gz"
HEAD = (
    "FROM debian:12.5-slim\n"
    "RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl"
    " gnupg wget && rm -rf /var/lib/apt/lists/*\n"
)
TAIL = "USER 10001\n"

VERIFIED = {
    "sha256sum-c": f'RUN curl -fsSLo /tmp/x.tgz {URL} && echo "{SHA}  /tmp/x.tgz" '
    "| sha256sum -c - && tar -xzf /tmp/x.tgz -C /usr/local && rm /tmp/x.tgz",
    "sha256sum-check": f'RUN curl -fsSLo /tmp/x.tgz {URL} && echo "{SHA}  /tmp/x.tgz" '
    "| sha256sum --check && tar -xzf /tmp/x.tgz -C /usr/local",
    "sha512sum-c": f'RUN curl -fsSLo /tmp/x.tgz {URL} && echo "{SHA}{SHA}  /tmp/x.tgz" '
    "| sha512sum -c - && tar -xzf /tmp/x.tgz -C /usr/local",
    "gpg-verify": f"RUN curl -fsSLo /tmp/x.tgz {URL} && curl -fsSLo /tmp/x.tgz.asc {URL}.asc"
    " && gpg --batch --verify /tmp/x.tgz.asc /tmp/x.tgz && tar -xzf /tmp/x.tgz -C /usr/local",
    "wget-O": f'RUN wget -q -O go.tgz {URL} && echo "{SHA} *go.tgz" | sha256sum -c - '
    "&& tar -C /usr/local -xzf go.tgz && rm go.tgz",
    "run-after-check": 'RUN curl -fsSLo /tmp/i.sh https://e.example/i.sh && echo "'
    f'{SHA}  /tmp/i.sh" | sha256sum -c - && sh /tmp/i.sh',
}

UNVERIFIED = {
    "curl-pipe-sh": "RUN curl -fsSL https://get.example.com/install.sh | sh",
    "wget-pipe-bash": "RUN wget -qO- https://get.example.com/install.sh | bash",
    "curl-o-then-sh": "RUN curl -fsSLo /tmp/i.sh https://e.example/i.sh && sh /tmp/i.sh",
    "curl-pipe-tar": f"RUN curl -fsSL {URL} | tar -xz -C /usr/local",
    "curl-o-then-tar": f"RUN curl -fsSLo /tmp/x.tgz {URL} && tar -xzf /tmp/x.tgz -C /usr/local",
    "sh-c-substitution": 'RUN sh -c "$(curl -fsSL https://e.example/install.sh)"',
    "piped-sums-not-run": "RUN curl -fsSL https://e.example/i.sh.sha256 | sha256sum -c - "
    "&& curl -fsSL https://e.example/i.sh | sh",
    "remote-sums-list": "RUN curl -fsSLo i.sh https://e.example/i.sh && curl -fsSL "
    "https://e.example/i.sh.sha256 | sha256sum -c - && sh i.sh",
    "other-file-checked": f"RUN curl -fsSLo a.tgz {URL} && curl -fsSLo b.tgz {URL}"
    f' && echo "{SHA}  a.tgz" | sha256sum -c - && tar -xzf b.tgz',
    "checked-after-use": f'RUN curl -fsSLo x.tgz {URL} && tar -xzf x.tgz && echo "{SHA}  '
    'x.tgz" | sha256sum -c -',
}


def _tree(tmp: Path, runs: dict[str, str]) -> Path:
    return write_tree(
        tmp, {f"{name}/Dockerfile": HEAD + run + "\n" + TAIL for name, run in runs.items()}
    )


def _blocking(result: GateResult) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for finding in result.findings:
        if finding.blocking:
            found.setdefault(finding.file, set()).add(f"{finding.tool}:{finding.rule}")
    return found


def test_checksum_and_signature_verified_downloads_pass_both_gates(
    tmp_path: Path, scanners: dict[str, str]
) -> None:
    report = run_gates(_tree(tmp_path / "tree", VERIFIED))
    blocking = {g.gate: _blocking(g) for g in report.gates}
    assert blocking == {"qa": {}, "secops": {}}
    assert report.verdict == "pass", report.to_json()


def test_each_unverified_download_fails_the_qa_gate(
    tmp_path: Path, scanners: dict[str, str]
) -> None:
    result = run_qa(_tree(tmp_path / "tree", UNVERIFIED))
    assert result.status == "fail", result.skipped_reasons
    blocking = _blocking(result)
    for name in UNVERIFIED:
        assert "dockerfile:dockerfile-unverified-download" in blocking.get(
            f"{name}/Dockerfile", set()
        ), (name, blocking)


SUDO = "FROM debian:12.5-slim\nRUN sudo apt-get update\nUSER 10001\n"
IGNORING = "ignored: [DL3004]\nfailure-threshold: none\n"
OPTION_NAMES = (
    "--ignore=DL3004",
    "-c",
    "--config=x.yaml",
    "--no-fail",
    "--failure-threshold=none",
    "-",
)


@pytest.mark.parametrize("content", ["config", "dockerfile"])
def test_sudo_is_reported_and_blocks_beside_files_named_like_hadolint_options(
    tmp_path: Path, scanners: dict[str, str], content: str
) -> None:
    """Named like options, holding a hadolint config (not linted) or a Dockerfile (linted
    under its own name: ``-`` included, which hadolint would otherwise read as stdin)."""
    text = IGNORING if content == "config" else SUDO
    tree = {"Dockerfile": SUDO, "x.yaml": IGNORING} | {name: text for name in OPTION_NAMES}
    result = run_qa(write_tree(tmp_path / "tree", tree))
    assert (result.status, result.skipped_reasons) == ("fail", {})
    blocking = _blocking(result)
    linted = ["Dockerfile", *(OPTION_NAMES if content == "dockerfile" else ())]
    for name in linted:
        assert "hadolint:DL3004" in blocking.get(name, set()), (name, blocking)
    assert set(blocking) == set(linted)
