"""The named-query loader: one definition per name, identifiers quoted, not pasted."""

from __future__ import annotations

import pytest

from backend.store.queries import composed, load_queries, query


def test_dialect_files_do_not_share_names() -> None:
    """queries.sql and admin_queries.sql of one dialect load side by side without a clash."""
    for dialect in ("sqlite", "postgres"):
        assert load_queries(dialect)  # would raise on a name defined in both files


def test_an_unknown_name_says_which() -> None:
    with pytest.raises(KeyError, match="no query named 'nope' in sql/ for sqlite"):
        query("sqlite", "nope")


def test_composed_quotes_identifiers() -> None:
    """A hostile role name stays one quoted identifier, never SQL."""
    text = composed("role_drop", role='x"; DROP TABLE pedidos; --').as_string(None)
    assert text == 'DROP ROLE "x""; DROP TABLE pedidos; --"'


def test_composed_joins_a_list_of_identifiers() -> None:
    text = composed("roles_drop_owned", roles=["a", "b"]).as_string(None)
    assert text.endswith('REASSIGN OWNED BY "a", "b" TO CURRENT_USER; DROP OWNED BY "a", "b"')
