"""The gate's own parsers run out of the server process, under limits.

A few hundred bytes of YAML aliases expand to gigabytes; the compose check must turn that
into a blocking ``exceeded-limits`` finding, in bounded time, without the gate's process
growing. And the child runs in the PR's copy: no module the PR brings may be imported.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from backend.gates.sandbox import RULE, Limits, run_sandboxed
from backend.gates.scanners._base import DEFAULT_TIMEOUT_S, ScanContext

from .conftest import write_tree
from .test_gate_command import cadencia


def alias_bomb(levels: int = 7) -> str:
    """A billion-laughs compose file: ``9 ** levels`` entries from ~45 bytes a level."""
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    previous = "a"
    for name in "bcdefghijk"[: levels - 1]:
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
        previous = name
    lines.append(f"services:\n  api:\n    image: api:1.0.0\n    ports: *{previous}")
    return "\n".join(lines) + "\n"


def _gate_bomb(tmp_path: Path, levels: int) -> tuple[dict[str, Any], float, str]:
    """``cadencia gate --json`` on a tree whose compose.yaml is an alias bomb of under 500
    bytes: the report, the seconds the gate took, and its stderr."""
    bomb = alias_bomb(levels)
    assert len(bomb.encode()) < 500
    started = time.monotonic()
    proc = cadencia("gate", str(write_tree(tmp_path, {"compose.yaml": bomb})), "--json")
    elapsed = time.monotonic() - started
    return json.loads(proc.stdout), elapsed, proc.stderr


def test_a_yaml_alias_bomb_is_a_blocking_finding_in_bounded_time(
    tmp_path: Path, scanners: dict[str, str]
) -> None:
    doc, elapsed, stderr = _gate_bomb(tmp_path, levels=7)
    qa = next(g for g in doc["gates"] if g["gate"] == "qa")
    assert qa["status"] == "fail", stderr
    [finding] = [f for f in qa["findings"] if f["tool"] == "compose"]
    assert (finding["rule"], finding["file"], finding["severity"]) == (
        RULE,
        "compose.yaml",
        "error",
    )
    assert "MiB of memory" in finding["message"]
    assert doc["verdict"] == "changes_requested"
    # in-process it took a minute and 2 GB; the child's limits stop it in seconds
    assert elapsed < DEFAULT_TIMEOUT_S * 0.75


def test_scanners_that_parse_yaml_themselves_are_bounded_too(
    tmp_path: Path, scanners: dict[str, str]
) -> None:
    # 9 ** 9 entries: detect-secrets expands them as well
    doc, elapsed, _ = _gate_bomb(tmp_path, levels=9)
    secops = next(g for g in doc["gates"] if g["gate"] == "secops")
    assert secops["status"] != "pass"
    assert "MemoryError" in secops["skipped_reasons"]["detect-secrets"]
    assert doc["verdict"] == "changes_requested"
    # without a memory limit detect-secrets ran into the scanner timeout with 3 GB
    assert elapsed < DEFAULT_TIMEOUT_S * 0.75


def test_nesting_deeper_than_the_parser_is_a_blocking_finding(tmp_path: Path) -> None:
    deep = "services:\n  api:\n    image: x:1\n    labels: " + "[" * 50_000 + "]" * 50_000 + "\n"
    (tmp_path / "compose.yaml").write_text(deep, encoding="utf-8")
    result = run_sandboxed("compose", ScanContext(root=tmp_path, files=("compose.yaml",)))
    assert result is not None
    assert result.status == "fail"
    assert [(f.rule, f.file) for f in result.findings] == [(RULE, "compose.yaml")]
    assert "nesting" in result.findings[0].message


def test_a_check_out_of_cpu_time_is_a_blocking_finding(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text(alias_bomb(), encoding="utf-8")
    ctx = ScanContext(root=tmp_path, files=("compose.yaml",))
    started = time.monotonic()
    result = run_sandboxed("compose", ctx, Limits(cpu_s=1))
    assert time.monotonic() - started < 30  # one CPU second, not the bomb's minute
    assert result is not None
    assert [(f.rule, f.file) for f in result.findings] == [(RULE, "compose.yaml")]
    assert "1s of CPU" in result.findings[0].message


def test_a_check_printing_more_than_its_limit_is_stopped(tmp_path: Path) -> None:
    services = "".join(f"  s{i}:\n    image: x:1\n    privileged: true\n" for i in range(50))
    (tmp_path / "compose.yaml").write_text("services:\n" + services, encoding="utf-8")
    ctx = ScanContext(root=tmp_path, files=("compose.yaml",))
    full = run_sandboxed("compose", ctx)
    assert full is not None
    assert len(full.findings) == 50  # what the check reports within its limits
    capped = run_sandboxed("compose", ctx, Limits(output_bytes=1024))
    assert capped is not None
    assert [(f.rule, f.severity) for f in capped.findings] == [(RULE, "error")]
    assert "bytes of output" in capped.findings[0].message


def test_modules_in_the_pr_are_never_imported_by_the_gate(
    tmp_path: Path, scanners: dict[str, str]
) -> None:
    marker = tmp_path / "imported"
    payload = f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
    tree = {
        # what the compose check and the parliament worker import, shadowed by the PR
        "yaml.py": payload,
        "json.py": payload,
        "parliament/__init__.py": payload,
        "compose.yaml": "services:\n  api:\n    image: api:1.0.0\n    privileged: true\n",
        "policy.json": (
            '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", '
            '"Action": "s3:GetObjectt", "Resource": "arn:aws:s3:::bucket/*"}]}\n'
        ),
    }
    proc = cadencia("gate", str(write_tree(tmp_path / "tree", tree)), "--json")
    doc = json.loads(proc.stdout)
    found = {(f["tool"], f["rule"]) for g in doc["gates"] for f in g["findings"]}
    assert {("compose", "compose-privileged"), ("parliament", "UNKNOWN_ACTION")} <= found
    assert not marker.exists()
