"""Fixtures for the infra integration tests: real git in a temporary directory."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from backend.prs.git import GitProvider
from tests.ci import in_ci

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "repos"


def require_tool(name: str) -> str:
    """The path of ``name``; skip locally, FAIL when ``CI=true``."""
    path = shutil.which(name)
    if path is None:
        if in_ci():
            pytest.fail(f"{name!r} is required in CI but is not on PATH")
        pytest.skip(f"{name!r} not on PATH")
    return path


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def git() -> Callable[..., str]:
    """``git(repo, *args) -> stdout``: the test's independent view of a repository."""
    return _git


@pytest.fixture
def repo(tmp_path: Path) -> GitProvider:
    """A fresh repository with one tracked file on ``main``, checked out."""
    require_tool("git")
    path = tmp_path / "repo"
    path.mkdir()
    (path / "README.md").write_text("# sample\n")
    provider = GitProvider(path)
    provider.ensure_repo()
    return provider
