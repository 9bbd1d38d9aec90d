"""How the scanners are invoked: file lists never on the command line, limits that scale.

60,000 paths on semgrep's command line gave "Argument list too long" and the gate could
never pass a monorepo PR. The recording executable below stands in for semgrep only to see
its argv (what the operating system limits); what semgrep finds is tested with the real one
in tests/integration/gates.
"""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

from backend.gates.runner import FILES_PER_TIMEOUT, scaled_timeout
from backend.gates.scanners import detect_secrets, semgrep
from backend.gates.scanners._base import ScanContext

# 1,000 names of ~250 characters: ~250 KB of paths, far more than one command line should
# carry (Linux refuses past ARG_MAX with the environment; 60,000 real paths did).
_NAME = "n" * 240


def _recording_semgrep(tmp_path: Path) -> tuple[Path, Path]:
    """An executable that writes its argv as JSON and prints an empty semgrep result."""
    record = tmp_path / "argv.json"
    exe = tmp_path / "semgrep"
    exe.write_text(
        f"#!{sys.executable} -S\n"
        "import json, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps(sys.argv))\n"
        "print(json.dumps({'results': [], 'errors': []}))\n",
        encoding="utf-8",
    )
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe, record


def test_semgrep_gets_the_copy_as_a_directory_not_thousands_of_paths(tmp_path: Path) -> None:
    root = tmp_path / "copy"
    files = []
    for i in range(1000):
        rel = f"d{i % 10}/{_NAME}{i}.yaml"
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("a: 1\n", encoding="utf-8")
        files.append(rel)
    assert sum(len(f) + 1 for f in files) > 250_000  # what main put on the command line
    exe, record = _recording_semgrep(tmp_path)
    result = semgrep.scan(ScanContext(root=root, files=tuple(files), semgrep_bin=str(exe)))
    assert result is not None
    assert result.status == "pass", result.detail
    argv = json.loads(record.read_text(encoding="utf-8"))
    assert argv[-2:] == ["--", "."]
    assert len(" ".join(argv)) < 1_000
    assert not any(_NAME in arg for arg in argv)
    # what a directory walk would skip is switched off
    assert {"--x-ignore-semgrepignore-files", "--no-exclude-binary-files"} <= set(argv)


def test_detect_secrets_walks_the_copy_too() -> None:
    argv = detect_secrets.command("detect-secrets")
    assert argv[-1] == "."
    assert "--all-files" in argv


def test_scanner_limits_grow_with_the_tree_and_keep_small_limits() -> None:
    assert scaled_timeout(120.0, 10) == 120.0
    assert scaled_timeout(120.0, FILES_PER_TIMEOUT * 5) == 600.0
    assert scaled_timeout(0.01, 3) == 0.01  # a test's tiny limit still times out
