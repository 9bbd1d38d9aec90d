"""Operators in the console, against the real backend: a viewer's token gets the read-only
console without ``--readonly``, and the Audit screen lists what operators did (refused
actions too)."""

from __future__ import annotations

from collections.abc import Callable

from console.app import CadenciaConsole
from console.screens.audit import AuditScreen
from console.widgets.status_bar import StatusBar
from tests.console.conftest import until_live, wait_for
from tests.console.fault_proxy import FaultProxy
from tests.console.world import Live, World

Factory = Callable[..., CadenciaConsole]


async def test_a_viewer_token_gets_the_readonly_console(
    make_app: Factory, proxy: FaultProxy, live: Live
) -> None:
    _, token = live.backend.operators.add("vera", "viewer")
    app = make_app(token=token)  # no --readonly
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await wait_for(pilot, lambda: app.actions.role == "viewer")
        await pilot.press("3")
        screen = app.screen
        active = {b.binding.action: b.enabled for b in screen.active_bindings.values()}
        assert active["act('approve')"] is False
        await pilot.press("a")
        await pilot.pause(0.3)
        assert app.screen is screen  # no confirmation opens
        assert not [r for r in proxy.requests if r[0] == "POST"]
        assert screen.query_one(StatusBar).readonly


async def test_the_audit_screen_lists_done_and_refused_actions(
    make_app: Factory, live: Live, world: World
) -> None:
    _, token = live.backend.operators.add("vera", "viewer")
    refused = live.http.post(
        f"/api/prs/{world.pr_ready}/approve",
        json={"operator": "vera"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert refused.status_code == 403
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await until_live(pilot)
        screen = AuditScreen(app)
        app.push_screen(screen)
        await wait_for(pilot, lambda: screen.loads == 1)
        mine = [e for e in screen.entries if e.operator == "vera"]
        assert [(e.action, e.outcome, e.status) for e in mine] == [("approve", "refused", 403)]
        assert any(e.operator == "admin" and e.outcome == "done" for e in screen.entries)
