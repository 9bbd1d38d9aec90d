"""``cadencia gate DIR [--json]`` end to end in a subprocess, with the real scanners."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from backend.commands.gate import EXIT_INCOMPLETE

from .conftest import write_tree
from .samples import CLEAN_TREE, PLANTED_TREE

REPO = Path(__file__).resolve().parents[3]


def cadencia(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "backend.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )


def test_gate_json_pass_exits_0(scanners: dict[str, str], tmp_path: Path) -> None:
    proc = cadencia("gate", str(write_tree(tmp_path, CLEAN_TREE)), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["verdict"] == "pass"
    assert doc["complete"] is True
    assert [g["gate"] for g in doc["gates"]] == ["qa", "secops"]


def test_installed_scanners_pass_a_clean_tree_with_nothing_skipped(
    scanners: dict[str, str], tmp_path: Path
) -> None:
    """What the install gives: no CADENCIA_SEMGREP_BIN; semgrep in the tools directory's venv,
    found there by the gate; ``tools install`` on it again changes nothing (idempotent)."""
    tools = tmp_path / "tools"
    (tools / "semgrep" / "bin").mkdir(parents=True)
    # the venv `cadencia tools install` made (scripts/test.sh runs it), seen through a link
    (tools / "semgrep" / "bin" / "semgrep").symlink_to(scanners["semgrep"])
    env = {k: v for k, v in os.environ.items() if k != "CADENCIA_SEMGREP_BIN"}
    env["CADENCIA_TOOLS_DIR"] = str(tools)
    again = cadencia("tools", "install", env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"semgrep 1.185.0 already installed in {tools / 'semgrep'}" in again.stdout
    assert sorted(p.name for p in (tools / "semgrep").iterdir()) == ["bin"]  # nothing rebuilt
    proc = cadencia("gate", str(write_tree(tmp_path / "tree", CLEAN_TREE)), "--json", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["verdict"], doc["complete"]) == ("pass", True)
    assert [(g["skipped"], g["skipped_reasons"]) for g in doc["gates"]] == [([], {}), ([], {})]
    status = cadencia("tools", "status", env=env)
    assert status.returncode == 0, status.stdout
    assert str(tools / "semgrep" / "bin" / "semgrep") in status.stdout


def test_missing_scanner_fails_closed_with_its_reason_and_exit_3(
    scanners: dict[str, str], tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere" / "semgrep"
    env = {**os.environ, "CADENCIA_SEMGREP_BIN": str(missing)}
    root = write_tree(tmp_path / "tree", CLEAN_TREE)
    proc = cadencia("gate", str(root), "--json", env=env)
    assert proc.returncode == EXIT_INCOMPLETE == 3, proc.stdout + proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["verdict"], doc["complete"]) == ("changes_requested", False)
    secops = doc["gates"][1]
    assert secops["skipped"] == ["semgrep"]
    assert secops["skipped_reasons"] == {
        "semgrep": f"semgrep not found at CADENCIA_SEMGREP_BIN={missing}"
    }
    text = cadencia("gate", str(root), env={**env, "COLUMNS": "400"})
    assert text.returncode == 3
    assert "not checked: semgrep (secops) could not run: semgrep not found" in text.stdout


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
