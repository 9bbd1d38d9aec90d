"""Real scanners for the gate tests: skip locally when one is missing, FAIL in CI."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.gates.runner import resolve_semgrep
from backend.gates.scanners._base import find_binary
from tests.ci import require

SCANNERS = ("hadolint", "detect-secrets", "semgrep", "terraform", "zizmor")


def require_scanner(name: str) -> str:
    """The scanner's path; ``pytest.skip`` locally, ``pytest.fail`` in CI."""
    if name == "semgrep":
        path = resolve_semgrep()
    else:
        path = find_binary(name, Path("/usr/local/bin") / name)
    require(path is not None, f"scanner {name!r}")
    assert path is not None
    return path


@pytest.fixture(scope="session")
def scanners() -> dict[str, str]:
    """Every real scanner the gates use (the gate tests need all of them)."""
    from backend.gates.scanners import parliament

    require(parliament.available(), "parliament (importable)")
    return {name: require_scanner(name) for name in SCANNERS}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``{relative path: text}`` under ``root`` and return ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
