"""`--demo` shows the whole product moving: the team, an infra PR corrected once and
waiting for a human, dev task PRs, and a teto de voltas takeover — within a minute."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from backend.settings import load_settings
from tests.integration.api.conftest import live_backend

STORY = {"handoff.accepted", "infra.pr_corrected", "dev.task_done", "interrupcao.aberta"}
"""Event types every demo run reaches."""


def test_demo_reaches_awaiting_human_and_a_takeover(tmp_path: Path) -> None:
    settings = load_settings(
        data_dir=tmp_path / "data",
        database_url=f"sqlite:///{tmp_path / 'demo.sqlite3'}",
        token="demo-token",
    )
    for live in live_backend(settings, demo=True):
        deadline = time.monotonic() + 120
        approvals: dict = {}
        kinds: set[str] = set()
        # The story's branches run concurrently (the dev worker's tasks may finish after the
        # infra PR reaches a human): wait for every milestone, not for the first one.
        while time.monotonic() < deadline:
            approvals = live.http.get("/api/approvals").json()
            prs = approvals["infra_prs"]
            events = live.http.get("/api/events", params={"limit": 1000}).json()
            kinds = {e["type"] for e in events}
            if (
                prs
                and prs[0]["gate_status"] == "awaiting_human"
                and approvals["interruptions"]
                and kinds >= STORY
            ):
                break
            time.sleep(0.5)
        [pr] = approvals["infra_prs"]
        assert pr["gate_status"] == "awaiting_human"
        assert pr["gate_correction_count"] == 1
        assert pr["branch"] == "feature/infra-setup"
        [takeover] = approvals["interruptions"]
        assert takeover["motivo"] == "teto_de_voltas"
        assert takeover["attempt_count"] == 5
        roster = {r["id"] for r in live.http.get("/api/roster").json()}
        assert {
            "criativo",
            "po",
            "arquiteto",
            "infra",
            "qa",
            "secops",
            "atendimento",
            "dev-api",
            "dev-web",
            "dev-worker",
        } <= roster
        assert kinds >= STORY
        accepted = next(
            e
            for e in live.http.get("/api/events", params={"limit": 1000}).json()
            if e["type"] == "handoff.accepted"
        )
        assert accepted["payload"]["operator"] == "demo (auto-accepted)"


def _wait_demo(live: Any, count: int, timeout: float = 120) -> list[dict[str, Any]]:
    """Wait until ``count`` infra PRs are awaiting a human and a takeover per run is open."""
    deadline = time.monotonic() + timeout
    prs: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        approvals = live.http.get("/api/approvals").json()
        prs = [p for p in approvals["infra_prs"] if p["gate_status"] == "awaiting_human"]
        if len(prs) == count and len(approvals["interruptions"]) == count:
            return prs
        time.sleep(0.5)
    raise AssertionError(f"the demo did not get there: {prs}")


def test_restarting_the_demo_reuses_its_project_in_a_new_session(tmp_path: Path) -> None:
    settings = load_settings(
        data_dir=tmp_path / "data",
        database_url=f"sqlite:///{tmp_path / 'demo.sqlite3'}",
        token="demo-token",
    )
    for live in live_backend(settings, demo=True):
        [first] = _wait_demo(live, 1)
        live.backend.pipeline.wait_gates(60)
    for live in live_backend(settings, demo=True):
        prs = _wait_demo(live, 2)
        projects = [p for p in live.http.get("/api/projects").json() if p["name"] == "loja-demo"]
        assert len(projects) == 1, projects
        sessions = {p["session_id"] for p in prs}
        assert len(sessions) == 2
        [second] = [p for p in prs if p["pr_action_id"] != first["pr_action_id"]]
        assert second["branch"] == f"feature/infra-setup-{second['session_id']}"
        assert second["gate_correction_count"] == 1  # the story played again: one correction
        assert {p["project_id"] for p in prs} == {projects[0]["id"]}
