"""``cadencia gate DIR [--json]`` end to end in a subprocess, with the real scanners."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import write_tree
from .samples import CLEAN_TREE, PLANTED_TREE

REPO = Path(__file__).resolve().parents[3]


def cadencia(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "backend.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_gate_json_pass_exits_0(scanners: dict[str, str], tmp_path: Path) -> None:
    proc = cadencia("gate", str(write_tree(tmp_path, CLEAN_TREE)), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["verdict"] == "pass"
    assert [g["gate"] for g in doc["gates"]] == ["qa", "secops"]


def test_gate_table_changes_requested_exits_1(scanners: dict[str, str], tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"Dockerfile": PLANTED_TREE["services/api/Dockerfile"]})
    proc = cadencia("gate", str(root))
    assert proc.returncode == 1, proc.stderr
    assert "DL3007" in proc.stdout
    assert "changes_requested" in proc.stdout


def test_gate_on_missing_directory_exits_2(tmp_path: Path) -> None:
    proc = cadencia("gate", str(tmp_path / "nope"), "--json")
    assert proc.returncode == 2
    assert "not a directory" in proc.stderr
