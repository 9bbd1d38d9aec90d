"""The markers follow what a test really uses, including parametrized PostgreSQL cases."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.markers import markers_for


@pytest.mark.parametrize(
    ("fixtures", "params", "names", "expected"),
    [
        (["pg_url", "pg_admin_url"], {}, [], {"postgres"}),
        (["private_db", "private_cluster"], {}, [], {"postgres"}),
        (["any_db"], {"any_db": "postgres"}, [], {"postgres"}),
        (["any_db"], {"any_db": "sqlite"}, [], set()),
        (["store"], {"store": "dynamodb"}, [], {"moto"}),
        (["moto_endpoint", "pg_admin_url"], {}, [], {"moto", "postgres"}),
        (["scanners"], {}, [], {"scanners"}),
        (["tmp_path"], {}, ["make_world", "require_scanners"], {"git", "scanners"}),
        (["tmp_path"], {}, ["run_gates"], set()),
        (["tmp_path", "sqlite_db"], {"engine": "sqlite"}, ["migrate"], set()),
    ],
)
def test_markers_for(
    fixtures: list[str], params: dict[str, str], names: list[str], expected: set[str]
) -> None:
    assert markers_for(fixtures, params, names) == expected


def test_not_postgres_deselects_the_postgres_cases() -> None:
    """The hook really runs at collection: ``-m "not postgres"`` keeps only the SQLite case."""
    target = Path(__file__).resolve().parents[1] / "integration" / "test_migrations.py"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "not postgres",
            str(target),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    ).stdout
    assert "test_migrations_apply_to_empty_database[sqlite]" in out
    assert "[postgres]" not in out
    assert "deselected" in out
