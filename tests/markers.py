"""Which markers a collected test gets, from what it really uses (applied in conftest.py).

A test needs PostgreSQL when it uses a fixture built on ``pg_admin_url`` (``pg_url``,
``pg_db``, …) or the private cluster of the teardown tests, or when it is the
``"postgres"`` case of a parametrized test (``any_db``, ``live``, ``guard``…: those fixtures
reach ``pg_url`` through ``request.getfixturevalue``, which no static closure shows). The
same rules give ``moto`` (``moto_endpoint`` or a ``"dynamodb"`` case), ``scanners`` (the
scanner fixtures, or a test that calls ``require_scanners()``) and ``git`` (the real-git
fixtures, or a test that builds a git repository itself; a test that reaches git only
through the backend, such as the API flows, is not marked). ``pytest -m "not postgres"``
then deselects every test that would otherwise skip (or, in CI, fail) for lack of
PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

_FIXTURES: dict[str, frozenset[str]] = {
    "postgres": frozenset({"pg_admin_url", "private_cluster"}),
    "moto": frozenset({"moto_endpoint"}),
    "scanners": frozenset({"scanners", "_scanners"}),
    "git": frozenset({"git", "repo"}),
}
_PARAMS: dict[str, str] = {"postgres": "postgres", "dynamodb": "moto"}
_CALLS: dict[str, frozenset[str]] = {
    "scanners": frozenset({"require_scanners", "require_scanner"}),
    "git": frozenset({"make_world", "GitProvider", "require_tool"}),
}


def markers_for(
    fixtures: Iterable[str], params: Mapping[str, Any], names: Iterable[str]
) -> set[str]:
    """The markers of one test.

    Args:
        fixtures: every fixture the test requests, directly or through other fixtures.
        params: its parametrization (``item.callspec.params``; empty when none).
        names: the global names its body refers to (``__code__.co_names``).
    """
    used, called = set(fixtures), set(names)
    found = {mark for mark, names_ in _FIXTURES.items() if used & names_}
    found |= {mark for mark, names_ in _CALLS.items() if called & names_}
    found |= {_PARAMS[v] for v in params.values() if isinstance(v, str) and v in _PARAMS}
    return found
