"""The console against the real backend (``backend.api.app.create_app``) on loopback."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from console.app import make_console
from console.config import ConsoleSettings
from tests.console.conftest import until_live, wait_for
from tests.console.fake_backend import serve


async def test_console_shows_the_real_roster_and_goes_live(tmp_path: Path) -> None:
    from backend.api.app import create_app
    from backend.settings import load_settings

    settings = load_settings(data_dir=tmp_path, token="tok")
    with serve(create_app(settings)) as url:
        app = make_console(ConsoleSettings(url=url, token="tok", operator="alice"))
        async with app.run_test(size=(120, 40)) as pilot:
            await until_live(pilot)
            table = app.screen.query_one("#roster", DataTable)
            await wait_for(pilot, lambda: table.row_count >= 3)
            assert "arquiteto" in [k.value for k in table.rows]


async def test_wrong_token_is_reported_not_fatal(tmp_path: Path) -> None:
    from backend.api.app import create_app
    from backend.settings import load_settings

    settings = load_settings(data_dir=tmp_path, token="tok")
    with serve(create_app(settings)) as url:
        app = make_console(ConsoleSettings(url=url, token="wrong", operator="alice"))
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: app.ready.is_set())
            await wait_for(pilot, lambda: app.connection == "reconnecting")
            assert app.is_running
