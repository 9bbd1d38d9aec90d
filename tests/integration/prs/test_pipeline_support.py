"""Shared set-up for the infra pipeline and dev task tests (no tests here).

A "world" is a migrated database, the team store over it, a real git repository copied
from a sample repo (committed on ``main``), a project pointing at it, a session, and —
unless told otherwise — the Arquiteto→Infra handoff accepted, which seeds the autonomy
``(infra, open_infra_pr) = auto_approve``.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from backend.agents.store import Project, TeamStore
from backend.events import Event, EventLog
from backend.gates.runner import resolve_semgrep
from backend.gates.scanners._base import find_binary
from backend.prs.git import GitProvider
from backend.prs.pipeline import InfraPipeline
from backend.settings import Settings, load_settings
from backend.store.db import Database
from tests.ci import in_ci

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "repos"
BRANCH = "feature/infra-setup"

CLEAN_FILES = {
    "Dockerfile": (
        "FROM python:3.11.9-slim-bookworm\nWORKDIR /app\nCOPY . .\nUSER 10001\n"
        'CMD ["python", "-m", "app"]\n'
    ),
    "compose.yaml": 'services:\n  api:\n    build: .\n    ports:\n      - "127.0.0.1:8000:8000"\n',
    "docs/infra.md": "# Infra\n",
}


@dataclass
class World:
    """Everything one pipeline test needs."""

    db: Database
    events: EventLog
    store: TeamStore
    pipeline: InfraPipeline
    project: Project
    session_id: str
    repo: GitProvider
    settings: Settings

    def git(self, *args: str) -> str:
        """An independent view of the repository through the real git CLI."""
        return subprocess.run(
            ["git", "-C", str(self.repo.repo_path), *args],
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    def commits_on_branch(self, branch: str = BRANCH) -> int:
        """Commits on ``branch`` that are not on ``main``."""
        return int(self.git("rev-list", "--count", f"main..{branch}").strip())

    def branch_exists(self, branch: str = BRANCH) -> bool:
        """Whether the branch ref exists."""
        return self.repo.branch_exists(branch)

    def of_type(self, type: str) -> list[Event]:
        """Every logged event of ``type``, oldest first."""
        return [e for e in self.events.after(0, 10_000) if e.type == type]

    def propose(self, files: dict[str, str] | None = None, **kw: Any) -> Any:
        """``propose_infra_pr`` for this world's project and session."""
        payload = [{"path": p, "content": c} for p, c in (files or CLEAN_FILES).items()]
        return self.pipeline.propose_infra_pr(
            self.project.id, self.session_id, kw.pop("title", "Infra setup"), payload, **kw
        )


def make_world(
    db: Database,
    tmp_path: Path,
    *,
    seed: bool = True,
    sample: str | None = None,
    module_map: dict[str, Any] | None = None,
    auto: bool = False,
    limit: int = 3,
) -> World:
    """Build a world; ``sample`` copies a sample repository, else a one-file repo."""
    git_path = shutil.which("git")
    if git_path is None:
        require(False, "git")
    repo_dir = tmp_path / "repo"
    if sample:
        shutil.copytree(SAMPLES / sample, repo_dir)
    else:
        repo_dir.mkdir()
        (repo_dir / "README.md").write_text("# sample\n")
    repo = GitProvider(repo_dir)
    repo.ensure_repo()
    settings = load_settings(data_dir=tmp_path / "data", gate_correction_limit=limit)
    events = EventLog(db)
    store = TeamStore(events)
    project = store.create_project("cobaia", repo_path=str(repo_dir), module_map=module_map)
    session = store.create_session(project.id, "infra")
    if seed:
        handoff = store.offer_handoff(project.id, session["id"], "arquiteto", "infra")
        store.accept_handoff(handoff.id, "alice")
    pipeline = InfraPipeline(store, settings, auto=auto)
    return World(db, events, store, pipeline, project, session["id"], repo, settings)


def require(condition: bool, what: str) -> None:
    """Skip locally, FAIL with ``CI=true``, when a real component is missing."""
    if condition:
        return
    if in_ci():
        pytest.fail(f"{what} is required in CI but is not available")
    pytest.skip(f"{what} not available")


def require_scanners() -> None:
    """hadolint, detect-secrets and semgrep must be installed for gate flows."""
    missing = [n for n in ("hadolint", "detect-secrets") if find_binary(n) is None]
    if resolve_semgrep() is None:
        missing.append("semgrep")
    require(not missing, f"gate scanners ({', '.join(missing)})")


def planted(files: dict[str, str]) -> dict[str, str]:
    """The planner's proposal with ``FROM python:latest`` and ``USER root`` planted."""
    out = dict(files)
    dockerfile = out["Dockerfile"]
    assert "FROM python:3.11.9-slim-bookworm AS runtime" in dockerfile
    out["Dockerfile"] = dockerfile.replace(
        "FROM python:3.11.9-slim-bookworm AS runtime", "FROM python:latest AS runtime"
    ).replace("USER 10001\n", "USER root\n")
    return out
