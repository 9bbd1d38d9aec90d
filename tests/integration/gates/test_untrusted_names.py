"""PR file names are data: a file named like a scanner's option is scanned, never obeyed.

Each tree holds a file the scanner must flag and files named like its options
(``--ignore=DL3004``, ``--format=tty``, ``--output=<path>``, ``--config=<path>``...); the gate
runs on it through ``cadencia gate DIR --json`` with the real scanners. A directory named
``--output=`` holding ``tmp/.../report.pth`` is the relative name ``--output=/tmp/...``: a
whole option, had it reached a command line as one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import write_tree
from .samples import FAKE_AWS_KEY
from .test_gate_command import cadencia

BAD_DOCKERFILE = """\
FROM ubuntu:22.04
WORKDIR app
RUN sudo apt-get update
RUN curl -sL https://get.example.com/install.sh | bash
USER 10001
"""
UNFORMATTED_TF = 'resource "null_resource" "x" {\n  triggers = {\n  a="b"\n  }\n}\n'
STAR_POLICY = (
    '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", '
    '"Action": "s3:GetObjectt", "Resource": "arn:aws:s3:::bucket/*"}]}\n'
)
INJECTED_ACTION = """\
name: greet
description: greet
runs:
  using: composite
  steps:
    - shell: bash
      run: echo "${{ github.event.issue.title }}"
"""
PRIVILEGED_COMPOSE = "services:\n  api:\n    image: api:1.0.0\n    privileged: true\n"
HADOLINT_CONFIG = "ignored: [DL3000, DL3004, DL4006, DL3008]\nfailure-threshold: none\n"


def _run(root: Path) -> dict[str, object]:
    proc = cadencia("gate", str(root), "--json")
    return {"doc": json.loads(proc.stdout), "stderr": proc.stderr}


@pytest.fixture(scope="module")
def gate(tmp_path_factory: pytest.TempPathFactory, scanners: dict[str, str]) -> dict[str, object]:
    """The gate's JSON for one tree with a file named like an option of every scanner."""
    tmp = tmp_path_factory.mktemp("names")
    tree = {
        "Dockerfile": BAD_DOCKERFILE,
        "--ignore=DL3004": BAD_DOCKERFILE,  # a Dockerfile by content
        "--exclude=Dockerfile/main.tf": UNFORMATTED_TF,
        "-list=false.tf": UNFORMATTED_TF,
        "--exclude-files=.*": f"AWS_ACCESS_KEY_ID={FAKE_AWS_KEY}\n",
        "--help.json": STAR_POLICY,
        "--min-severity=high/action.yml": INJECTED_ACTION,
        "--help/compose.yaml": PRIVILEGED_COMPOSE,
    }
    return _run(write_tree(tmp / "tree", tree))


@pytest.mark.parametrize(
    "options",
    [
        pytest.param(["--ignore=DL3004", "--ignore=DL3000", "--ignore=DL4006"], id="ignore"),
        pytest.param(["--format=tty", "--output={outside}/report.pth"], id="output"),
        pytest.param(["--config={outside}/hadolint.yaml"], id="config"),
        pytest.param(["--no-fail", "-t", "--failure-threshold=none"], id="flags"),
        pytest.param(["-", "-c", "--", "-i"], id="stdin"),
    ],
)
def test_hadolint_lints_files_named_like_its_options(
    tmp_path: Path, scanners: dict[str, str], options: list[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "hadolint.yaml").write_text(HADOLINT_CONFIG, encoding="utf-8")
    names = [o.replace("{outside}", outside.as_posix()) for o in options]
    # each is a Dockerfile by its content, so its name reaches hadolint's command line
    tree = {"Dockerfile": BAD_DOCKERFILE} | {name: BAD_DOCKERFILE for name in names}
    result = _run(write_tree(tmp_path / "tree", tree))
    qa = _gate(result, "qa")
    assert (qa["status"], qa["skipped_reasons"]) == ("fail", {}), result["stderr"]
    found = _found(result, "hadolint")
    for name in ["Dockerfile", *names]:
        assert {(name, "DL3004"), (name, "DL3000"), (name, "DL4006")} <= found, name
    assert sorted(p.name for p in outside.iterdir()) == ["hadolint.yaml"]  # nothing written


def _found(gate: dict[str, object], tool: str) -> set[tuple[str, str]]:
    doc = gate["doc"]
    assert isinstance(doc, dict)
    return {
        (f["file"], f["rule"]) for g in doc["gates"] for f in g["findings"] if f["tool"] == tool
    }


def _gate(gate: dict[str, object], name: str) -> dict[str, object]:
    doc = gate["doc"]
    assert isinstance(doc, dict)
    return next(g for g in doc["gates"] if g["gate"] == name)


def test_every_scanner_ran(gate: dict[str, object]) -> None:
    doc = gate["doc"]
    assert isinstance(doc, dict)
    assert doc["verdict"] == "changes_requested"
    assert [g["skipped_reasons"] for g in doc["gates"]] == [{}, {}], gate["stderr"]


@pytest.mark.parametrize(
    ("tool", "flagged"),
    [
        pytest.param(
            "semgrep",
            {
                ("Dockerfile", "dockerfile-curl-pipe-shell"),
                ("--ignore=DL3004", "dockerfile-curl-pipe-shell"),
            },
            id="semgrep",
        ),
        pytest.param(
            "detect-secrets", {("--exclude-files=.*", "AWS Access Key")}, id="detect-secrets"
        ),
        pytest.param(
            "terraform",
            {
                ("-list=false.tf", "terraform-fmt"),
                ("--exclude=Dockerfile/main.tf", "terraform-fmt"),
            },
            id="terraform",
        ),
        pytest.param("parliament", {("--help.json", "UNKNOWN_ACTION")}, id="parliament-policy"),
        pytest.param(
            "zizmor",
            {("--min-severity=high/action.yml", "template-injection")},
            id="zizmor-action-under-a-directory",
        ),
        pytest.param(
            "compose",
            {("--help/compose.yaml", "compose-privileged")},
            id="compose-file-under-a-directory",
        ),
    ],
)
def test_each_scanner_flags_files_named_like_its_options(
    gate: dict[str, object], tool: str, flagged: set[tuple[str, str]]
) -> None:
    assert flagged <= _found(gate, tool)
