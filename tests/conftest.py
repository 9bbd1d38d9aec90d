"""Fixtures shared by every test level: real PostgreSQL, moto over HTTP, stores.

In CI (``CI`` set to 1/true/yes, see :mod:`tests.ci`) a test whose service is missing
FAILS instead of skipping.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backend.settings import Settings, load_settings
from backend.store.db import Database, open_database
from backend.store.migrate import migrate
from tests.ci import require, require_binary
from tests.markers import markers_for

__all__ = ["require", "require_binary"]  # tests import them from here too


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test by the real components it uses (see :mod:`tests.markers`)."""
    for item in items:
        function = getattr(item, "function", None)
        code = getattr(function, "__code__", None)
        callspec = getattr(item, "callspec", None)
        marks = markers_for(
            getattr(item, "fixturenames", ()),
            callspec.params if callspec is not None else {},
            code.co_names if code is not None else (),
        )
        for mark in sorted(marks):
            item.add_marker(mark)


@pytest.fixture(scope="session")
def pg_admin_url() -> str:
    """Admin URL of the PostgreSQL server started by .ci/run (``CADENCIA_TEST_PG_URL``).

    Under pytest-xdist, worker ``gwN`` takes the N-th URL of ``CADENCIA_TEST_PG_URLS``
    (space-separated; scripts/test.sh starts one cluster per worker) when it has one: the
    tool roles are cluster-wide, and two workers' tests would re-password each other's.
    """
    url = os.environ.get("CADENCIA_TEST_PG_URL")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    per_worker = os.environ.get("CADENCIA_TEST_PG_URLS", "").split()
    if worker.startswith("gw") and worker[2:].isdigit() and int(worker[2:]) < len(per_worker):
        url = per_worker[int(worker[2:])]
    require(bool(url), "PostgreSQL (set CADENCIA_TEST_PG_URL; .ci/run starts one)")
    assert url is not None
    return url


def _with_db(url: str, dbname: str) -> str:
    from urllib.parse import urlparse, urlunparse

    return urlunparse(urlparse(url)._replace(path=f"/{dbname}"))


@pytest.fixture
def pg_url(pg_admin_url: str) -> Iterator[str]:
    """A brand-new, empty PostgreSQL database for one test; dropped afterwards."""
    import psycopg

    name = f"cadencia_t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = _with_db(pg_admin_url, name)
    yield url
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A private data dir for one test."""
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def settings(data_dir: Path) -> Settings:
    """Settings pointing at the test's data dir (embedded SQLite)."""
    return load_settings(data_dir=data_dir, database_url=f"sqlite:///{data_dir / 'state.sqlite3'}")


@pytest.fixture
def sqlite_db(settings: Settings) -> Iterator[Database]:
    """A migrated SQLite database in the test's data dir."""
    db = open_database(settings.resolved_database_url())
    migrate(db)
    yield db
    db.close()


@pytest.fixture
def pg_db(pg_url: str) -> Iterator[Database]:
    """A migrated PostgreSQL database."""
    db = open_database(pg_url)
    migrate(db)
    yield db
    db.close()


@pytest.fixture(params=["sqlite", "postgres"])
def any_db(request: pytest.FixtureRequest) -> Database:
    """The same test on SQLite and on real PostgreSQL."""
    return request.getfixturevalue("sqlite_db" if request.param == "sqlite" else "pg_db")


class _OneRequestAtATime:
    """WSGI wrapper serializing moto's request handling.

    Real DynamoDB applies each single-item write atomically; moto's in-memory backend does
    a read-modify-write per ``UpdateItem`` with no lock, so under its threaded server two
    concurrent ``ADD attempts :one`` can both return 1 (seen as a flaky ceiling race).
    One request at a time restores the service's per-item atomicity the ledger relies on.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ: Any, start_response: Any) -> Any:
        with self.lock:
            # Materialize the body inside the lock: moto builds it while iterating.
            return list(self.app(environ, start_response))


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """moto's server over real HTTP on loopback, for the whole session."""
    try:
        from moto.server import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server
    except ImportError:
        require(False, "moto[server]")
        raise
    app = _OneRequestAtATime(DomainDispatcherApplication(create_backend_app))
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="moto", daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    yield f"http://{host}:{port}"
    server.shutdown()
    thread.join(timeout=10)
