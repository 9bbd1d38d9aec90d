"""Named queries: every ``*queries.sql`` of a level is loaded once; a name is defined once."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.store.queries import level_queries, load_queries


def test_erp_tool_and_role_queries_are_loaded_with_the_rest() -> None:
    sqlite, postgres = load_queries("sqlite"), load_queries("postgres")
    for name in ("tool_consulta_pedido", "tool_cadastro_email", "event_append"):
        assert name in sqlite
        assert name in postgres
    assert "role_create" in postgres
    assert "role_create" not in sqlite
    assert sqlite["tool_cadastro_email"].startswith("UPDATE clientes SET email = :valor")


def test_a_name_defined_in_two_files_of_one_level_is_refused(tmp_path: Path) -> None:
    (tmp_path / "queries.sql").write_text("-- name: a\nSELECT 1\n")
    (tmp_path / "erp_queries.sql").write_text("-- name: b\nSELECT 2\n-- name: a\nSELECT 3\n")
    with pytest.raises(RuntimeError, match="'a' is defined twice"):
        level_queries(tmp_path)


def test_a_name_defined_twice_in_one_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "queries.sql").write_text("-- name: a\nSELECT 1\n-- name: a\nSELECT 2\n")
    with pytest.raises(RuntimeError, match="defined twice"):
        level_queries(tmp_path)


def test_other_sql_files_are_not_queries(tmp_path: Path) -> None:
    (tmp_path / "queries.sql").write_text("-- name: a\nSELECT 1\n")
    (tmp_path / "grants.sql").write_text("-- name: g\nGRANT nothing\n")
    assert level_queries(tmp_path) == {"a": "SELECT 1"}
