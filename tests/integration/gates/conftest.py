"""Real scanners for the gate tests: skip locally when one is missing, FAIL with CI=true."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from backend.gates.runner import resolve_semgrep
from backend.gates.scanners._base import find_binary

SCANNERS = ("hadolint", "detect-secrets", "semgrep", "terraform")


def require_scanner(name: str) -> str:
    """The scanner's path; ``pytest.skip`` locally, ``pytest.fail`` when ``CI=true``."""
    if name == "semgrep":
        path = resolve_semgrep()
    else:
        path = find_binary(name, Path("/usr/local/bin") / name)
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"scanner {name!r} is required in CI but is not installed")
        pytest.skip(f"scanner {name!r} not installed")
    return path


@pytest.fixture(scope="session")
def scanners() -> dict[str, str]:
    """Every real scanner the gates use (the gate tests need all of them)."""
    from backend.gates.scanners import parliament

    if not parliament.available():
        if os.environ.get("CI") == "true":
            pytest.fail("parliament is required in CI but is not importable")
        pytest.skip("parliament not importable")
    return {name: require_scanner(name) for name in SCANNERS}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``{relative path: text}`` under ``root`` and return ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
