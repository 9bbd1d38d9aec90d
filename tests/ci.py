"""Skip locally, fail in CI: the one place that decides whether a missing component is fatal.

``.ci/run`` sets ``CI=true``; other CI systems set ``CI=1`` or ``CI=yes``. All of them
(in any case) mean "nothing may be skipped": a test whose PostgreSQL, moto, git or scanner
is missing fails there instead of passing in silence.
"""

from __future__ import annotations

import os
import shutil

import pytest

_TRUE = frozenset({"1", "true", "yes"})


def in_ci() -> bool:
    """True when ``CI`` is ``1``, ``true`` or ``yes`` (case-insensitive, spaces ignored)."""
    return os.environ.get("CI", "").strip().lower() in _TRUE


def require(condition: bool, what: str) -> None:
    """Skip locally, fail in CI, when a real component the test needs is missing."""
    if condition:
        return
    if in_ci():
        pytest.fail(f"{what} is required in CI but is not available")
    pytest.skip(f"{what} not available")


def require_binary(name: str) -> str:
    """The path of executable ``name``; skip (fail in CI) if it is missing."""
    path = shutil.which(name)
    require(path is not None, f"the {name!r} executable")
    assert path is not None
    return path
