"""The sandbox's check table and what its child imports."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from backend.gates.sandbox import CHECKS


@pytest.mark.parametrize("tool", sorted(CHECKS))
def test_each_check_module_is_the_tool_it_is_listed_as(tool: str) -> None:
    module = importlib.import_module(CHECKS[tool])
    assert tool == module.TOOL
    assert callable(module.scan)
    assert callable(module.targets)


def test_the_child_imports_only_the_check_it_runs() -> None:
    """Start-up is most of a small PR's check: the other checks' imports are not paid."""
    probe = (
        "import json, sys\n"
        "import backend.gates.sandbox as s\n"
        "s._check('dockerfile', 'targets')\n"
        "print(json.dumps(sorted(m for m in s.CHECKS.values() if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-P", "-c", probe], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == ["backend.gates.scanners.dockerfile"]
