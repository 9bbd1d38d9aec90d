"""``cadencia projections rebuild``: the table from the log, and the summary line."""

from __future__ import annotations

import re

import pytest

from backend.agents.roster_facts import fold
from backend.cli import main
from backend.events import EventLog
from backend.projections.roster_table import RosterProjection
from backend.settings import Settings
from backend.store.db import Database
from tests.integration.projections.history import history


def test_rebuild_command_rebuilds_the_table_and_prints_a_summary(
    sqlite_db: Database, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = EventLog(sqlite_db)  # appends that kept no projection
    with sqlite_db.transaction() as tx:
        for a in history(seed=5, n=300):
            bare.append_in(tx, a.type, a.payload, project_id=a.project_id, agent=a.agent)
    url = settings.resolved_database_url()
    assert main(["projections", "rebuild", "--database", url, "--batch", "70"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^rebuilt 300 events into roster in \d+\.\d\d s \(", out, re.M), out
    assert "up to event 300" in out
    table = RosterProjection(sqlite_db, bare).table()
    assert table == fold(bare.until(300))
