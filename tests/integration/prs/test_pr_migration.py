"""Migration 0005 carries existing infra artifacts and dev task PRs into ``pull_requests``
(real SQLite and PostgreSQL), and the pipeline keeps working on them."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_pipeline_support import make_world

from backend.dev.tasks import DevTasks
from backend.store import migrate as migrate_module
from backend.store.db import Database, open_database
from backend.store.queries import migration_files

_OLD = 4  # the last migration before one table held every PR


def _old_rows(db: Database) -> None:
    """Rows as the pipeline of migration 0004 wrote them (one infra PR, two dev tasks)."""
    now = "2026-01-01T00:00:00+00:00"
    blocked = False if db.dialect == "postgres" else 0
    with db.transaction() as tx:
        for sql, params in (
            (
                "INSERT INTO infra_artifacts (pr_action_id, project_id, session_id, title, "
                "branch, pr_id, pr_url, head, files, findings, gate_status, "
                "gate_correction_count, blocked, blocked_reason, created_at, updated_at) VALUES "
                "('act_inf', 'prj_1', 'ses_1', 'Infra', 'feature/infra-setup', 'abc', "
                "'file:///r#pr/abc', 'h1', '[\"Dockerfile\"]', '[]', 'awaiting_human', 1, "
                "%(blocked)s, NULL, %(now)s, %(now)s)",
                {"blocked": blocked, "now": now},
            ),
            (
                "INSERT INTO dev_tasks (id, project_id, module, title, branch, pr_action_id, "
                "head, files, findings, gate_status, gate_correction_count, blocked, "
                "blocked_reason, created_at, updated_at) VALUES ('tsk_1', 'prj_1', 'api', "
                "'Docs', 'feature/task-tsk_1', 'act_dev', 'h2', '[\"README.md\"]', '[]', "
                "'awaiting_human', 0, %(blocked)s, NULL, %(now)s, %(now)s)",
                {"blocked": blocked, "now": now},
            ),
            (
                "INSERT INTO dev_tasks (id, project_id, module, title, branch, pr_action_id, "
                "head, files, findings, gate_status, gate_correction_count, blocked, "
                "blocked_reason, created_at, updated_at) VALUES ('tsk_2', 'prj_1', 'worker', "
                "'Later', NULL, NULL, NULL, '[]', '[]', NULL, 0, %(blocked)s, NULL, %(now)s, "
                "%(now)s)",
                {"blocked": blocked, "now": now},
            ),
            (
                "INSERT INTO gate_history (subject, from_status, to_status, actor, note, ts) "
                "VALUES ('tsk_1', NULL, 'awaiting_qa', 'dev-api', 'PR opened', %(now)s)",
                {"now": now},
            ),
        ):
            if db.dialect == "sqlite":
                sql = sql.replace("%(blocked)s", ":blocked").replace("%(now)s", ":now")
            tx.execute_sql(sql, params)


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_existing_prs_move_into_pull_requests(
    engine: str, request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'old.sqlite3'}"
        if engine == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    db = open_database(url)
    try:
        everything = migration_files(db.dialect)
        # Stop at the schema the old pipeline ran on, then upgrade as a user would.
        monkeypatch.setattr(
            migrate_module, "migration_files", lambda d: [m for m in everything if m[0] <= _OLD]
        )
        assert migrate_module.migrate(db)[-1] == _OLD
        _old_rows(db)
        monkeypatch.undo()
        assert 5 in migrate_module.migrate(db)

        world = make_world(db, tmp_path)
        infra = world.pipeline.get("act_inf")
        assert (infra.kind, infra.session_id, infra.author) == ("infra", "ses_1", "infra")
        assert (infra.gate_status, infra.gate_correction_count) == ("awaiting_human", 1)
        assert infra.files == ("Dockerfile",)
        assert [p.id for p in world.pipeline.in_review()] == ["act_inf"]

        dev = DevTasks(world.store, world.settings, pipeline=world.pipeline)
        task = dev.get("tsk_1")
        assert (task.pr_action_id, task.gate_status, task.branch) == (
            "act_dev",
            "awaiting_human",
            "feature/task-tsk_1",
        )
        pr = world.pipeline.get("act_dev")
        assert (pr.kind, pr.task_id, pr.author, pr.pr_id) == ("dev", "tsk_1", "dev-api", None)
        assert [(h.to_status, h.actor) for h in dev.timeline("tsk_1")] == [
            ("awaiting_qa", "dev-api")
        ]
        unopened = dev.get("tsk_2")
        assert (unopened.pr_action_id, unopened.gate_status) == (None, None)
        # Migration 0010: a task with a PR is in review, one without is still to do.
        assert (task.status, unopened.status) == ("in_review", "todo")
        assert {p.kind for p in world.pipeline.open_prs()} == {"infra", "dev"}
    finally:
        db.close()
