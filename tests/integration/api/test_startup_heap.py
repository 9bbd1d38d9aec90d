"""A started backend keeps what start-up built out of the garbage collector's full passes
(``gc.freeze``): walking those ~120k objects took ~75 ms holding the GIL every few seconds,
and whichever request allocated at that moment waited for it (``bench.history``'s p99)."""

from __future__ import annotations

import gc
from pathlib import Path

from backend.settings import load_settings
from tests.integration.api.conftest import live_backend


def test_start_up_freezes_its_heap_and_shutdown_unfreezes_it(tmp_path: Path) -> None:
    settings = load_settings(
        data_dir=tmp_path / "data",
        database_url=f"sqlite:///{tmp_path / 'heap.sqlite3'}",
        token="test-token-123",
    )
    gc.unfreeze()
    serving = live_backend(settings)
    live = next(serving)
    try:
        assert live.http.get("/api/inbox").status_code == 200
        assert gc.get_freeze_count() > 10_000
    finally:
        next(serving, None)  # shuts the server down
    assert gc.get_freeze_count() == 0  # a process that starts many apps collects them again
