"""The Inbox (key ``2``) and its detail screens, driven with Pilot against the real backend
(``create_app`` on loopback, through the fault proxy): every key acts through the route the
item offers, and the console shows what the server answered."""

from __future__ import annotations

from collections.abc import Callable

from textual.pilot import Pilot
from textual.widgets import DataTable, Label, Static

from console.app import CadenciaConsole
from console.dialogs import ConfirmScreen, PromptScreen
from console.screens.inbox import InboxScreen
from console.screens.item_details import ItemDetailScreen
from console.screens.pr_detail import PrDetailScreen
from tests.console.conftest import until_live, wait_for
from tests.console.fault_proxy import FaultProxy
from tests.console.world import Live, World

Factory = Callable[..., CadenciaConsole]


def _rows(app: CadenciaConsole) -> list[str]:
    table = app.screen.query_one("#inbox", DataTable)
    return [k.value or "" for k in sorted(table.rows, key=table.get_row_index)]


def _cell(app: CadenciaConsole, item_id: str, column: str) -> str:
    return str(app.screen.query_one("#inbox", DataTable).get_cell(item_id, column))


async def _inbox(pilot: Pilot) -> InboxScreen:
    await until_live(pilot)
    await pilot.press("2")
    screen = pilot.app.screen
    assert isinstance(screen, InboxScreen)
    await wait_for(pilot, lambda: len(_rows(pilot.app)) == len(pilot.app.inbox) > 0)  # type: ignore[arg-type]
    return screen


async def _select(pilot: Pilot, screen: InboxScreen, item_id: str) -> None:
    """Walk down with ``j`` to ``item_id`` (from the top)."""
    screen.query_one("#inbox", DataTable).move_cursor(row=0, animate=False)
    await pilot.pause()
    for _ in range(len(_rows(pilot.app)) + 1):
        current = screen.current_item()
        if current is not None and current.id == item_id:
            return
        await pilot.press("j")
    raise AssertionError(f"{item_id} not in the Inbox")


def _active(app: CadenciaConsole) -> set[str]:
    return {
        f"{b.binding.key}:{b.binding.action}"
        for b in app.screen.active_bindings.values()
        if b.binding.action.startswith("act(")
    }


async def test_inbox_lists_every_kind_in_server_order_with_projects_told_apart(
    make_app: Factory, live: Live, world: World
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _inbox(pilot)
        served = live.http.get("/api/inbox").json()
        assert _rows(app) == [i["id"] for i in served]  # most urgent first, as served
        kinds = {i["kind"] for i in served}
        assert {"interruption", "action_approval", "pr", "pr_blocked", "handoff"} <= kinds
        twin = _cell(app, f"handoff:{world.offered_handoff}", "project")
        first = _cell(app, f"action_approval:{world.adr_approval}", "project")
        assert twin != first
        assert twin.startswith("loja·")
        assert first.startswith("loja·")
        assert _cell(app, f"pr:{world.dev_ready}", "kind") == "PR dev"


async def test_new_items_are_marked_until_the_operator_looked_and_the_bell_rings(
    make_app: Factory, live: Live, world: World
) -> None:
    app = make_app(bell=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await _inbox(pilot)
        assert all(_cell(app, i, "new") == "●" for i in _rows(app))  # never looked before
        assert app.bells == 0  # the first load is not an arrival
        await pilot.press("1", "2")  # the list was shown, nothing was opened: all still new
        await pilot.pause(0.2)
        assert all(_cell(app, i, "new") == "●" for i in _rows(app))
        screen = app.screen
        assert isinstance(screen, InboxScreen)
        await _select(pilot, screen, f"action_approval:{world.adr_approval}")
        await pilot.press("enter")  # opened: that one is no longer new
        await wait_for(pilot, lambda: app.screen is not screen)
        await pilot.press("escape")
        await wait_for(
            pilot, lambda: _cell(app, f"action_approval:{world.adr_approval}", "new") == ""
        )
        assert sum(_cell(app, i, "new") == "●" for i in _rows(app)) == len(_rows(app)) - 1
        session = live.backend.store.create_session(world.loja_twin, "late")
        late = live.backend.store.request_approval(
            project_id=world.loja_twin,
            session_id=session["id"],
            agent="arquiteto",
            action="open_adr_pr",
            payload={"title": "ADR 0016", "content": "Later."},
            stage="default",
            rule="default: open_adr_pr -> ask",
        )
        await wait_for(pilot, lambda: f"action_approval:{late}" in _rows(app), timeout=20)
        assert _cell(app, f"action_approval:{late}", "new") == "●"
        assert _cell(app, f"action_approval:{world.adr_approval}", "new") == ""
        assert app.bells == 1


async def test_a_approves_a_dev_pr_and_the_server_merges_it(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _inbox(pilot)
        await _select(pilot, screen, f"pr:{world.dev_ready}")
        assert "a:act('approve')" in _active(app)
        await pilot.press("a")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await wait_for(pilot, lambda: f"pr:{world.dev_ready}" not in _rows(app), timeout=20)
        assert proxy.calls("POST", f"/api/prs/{world.dev_ready}/approve") == [{"operator": "alice"}]
        assert live.backend.pipeline.get(world.dev_ready).gate_status == "merged"
        assert app.outcomes[f"pr:{world.dev_ready}"].text == "now merged"


async def test_x_rejects_with_the_required_reason(
    make_app: Factory, proxy: FaultProxy, world: World
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _inbox(pilot)
        await _select(pilot, screen, f"pr:{world.dev_ready}")
        await pilot.press("x")
        assert isinstance(app.screen, PromptScreen)
        await pilot.press("enter")  # blank: refused, nothing sent
        assert isinstance(app.screen, PromptScreen)
        await pilot.press(*"cover the error path", "enter")
        path = f"/api/prs/{world.dev_ready}/reject"
        await wait_for(pilot, lambda: proxy.calls("POST", path))
        assert proxy.calls("POST", path) == [
            {"operator": "alice", "reason": "cover the error path"}
        ]
        await wait_for(pilot, lambda: f"pr:{world.dev_ready}" not in _rows(app), timeout=20)


async def test_u_unblocks_and_c_closes_a_blocked_pr(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    app = make_app()
    item = f"pr_blocked:{world.dev_blocked}"
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _inbox(pilot)
        await _select(pilot, screen, item)
        assert {"u:act('unblock')", "c:act('close')"} <= _active(app)
        assert "a:act('approve')" not in _active(app)  # the key shows only where offered
        await pilot.press("u", "y")
        await wait_for(pilot, lambda: proxy.calls("POST", f"/api/prs/{world.dev_blocked}/unblock"))
        await wait_for(pilot, lambda: item not in _rows(app), timeout=20)
        assert live.backend.pipeline.get(world.dev_blocked).gate_status != "blocked"
        assert app.outcomes[f"pr:{world.dev_blocked}"].text.startswith("now ")


async def test_c_closes_a_blocked_pr(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    app = make_app()
    item = f"pr_blocked:{world.dev_blocked}"
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _inbox(pilot)
        await _select(pilot, screen, item)
        await pilot.press("c", "y")
        await wait_for(pilot, lambda: item not in _rows(app), timeout=20)
        assert proxy.calls("POST", f"/api/prs/{world.dev_blocked}/close") == [{"operator": "alice"}]
        assert live.backend.pipeline.get(world.dev_blocked).gate_status == "closed"


async def test_a_approves_the_held_adr_action_and_shows_what_the_server_did(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    app = make_app()
    item = f"action_approval:{world.adr_approval}"
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _inbox(pilot)
        await _select(pilot, screen, item)
        await pilot.press("a", "y")
        await wait_for(pilot, lambda: item not in _rows(app), timeout=20)
        answer = live.http.get(f"/api/approvals/{world.adr_approval}").json()
        assert answer["status"] in ("approved", "failed")
        outcome = app.outcomes[f"approval:{world.adr_approval}"].text
        assert outcome.startswith(answer["status"])  # the server's word, not a guess


async def test_x_rejects_the_held_action_with_a_reason(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    app = make_app()
    item = f"action_approval:{world.adr_approval}"
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _inbox(pilot)
        await _select(pilot, screen, item)
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen))
        await pilot.press(*"not yet", "enter")
        await wait_for(pilot, lambda: item not in _rows(app), timeout=20)
        assert proxy.calls("POST", f"/api/approvals/{world.adr_approval}/reject") == [
            {"operator": "alice", "reason": "not yet"}
        ]
        answer = live.http.get(f"/api/approvals/{world.adr_approval}").json()
        assert (answer["status"], answer["reason"]) == ("rejected", "not yet")


async def test_a_accepts_and_d_declines_offered_handoffs(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    app = make_app()
    item = f"handoff:{world.offered_handoff}"
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _inbox(pilot)
        await _select(pilot, screen, item)
        assert {"a:act('accept')", "d:act('decline')"} <= _active(app)
        assert "a:act('approve')" not in _active(app)
        await pilot.press("d", "y")
        await wait_for(pilot, lambda: item not in _rows(app), timeout=20)
        assert proxy.calls("POST", f"/api/handoffs/{world.offered_handoff}/decline") == [
            {"operator": "alice"}
        ]
        handoffs = live.http.get("/api/handoffs", params={"status": "declined"}).json()
        assert world.offered_handoff in {h["id"] for h in handoffs}


async def test_a_accepts_an_offered_handoff(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    app = make_app()
    item = f"handoff:{world.offered_handoff}"
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _inbox(pilot)
        await _select(pilot, screen, item)
        await pilot.press("a", "y")
        await wait_for(pilot, lambda: item not in _rows(app), timeout=20)
        assert app.outcomes[item.replace("handoff:", "handoff:", 1)].text == "handoff accepted"


async def test_n_goes_to_the_next_item_that_needs_a_human(make_app: Factory) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _inbox(pilot)
        waiting = [i.id for i in app.inbox if i.state != "claimed"]
        first = screen.current_item()
        assert first is not None
        await pilot.press("n")
        current = screen.current_item()
        assert current is not None
        assert current.id != first.id
        assert current.id in waiting
        assert current.state != "claimed"  # bob's takeover is his: n skips it


async def test_enter_opens_the_detail_of_each_kind(make_app: Factory, world: World) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _inbox(pilot)
        await _select(pilot, screen, f"action_approval:{world.adr_approval}")
        await pilot.press("enter")
        assert isinstance(app.screen, ItemDetailScreen)
        detail = app.screen
        await wait_for(pilot, lambda: detail.loads > 0)
        text = str(detail.query_one("#record", Static).render())
        assert "open_adr_pr" in text
        assert "stage default" in text
        assert "rule default: open_adr_pr -> ask" in text
        assert "ADR 0001" in text  # the payload the Arquiteto proposed
        await pilot.press("escape")
        await _select(pilot, screen, f"handoff:{world.offered_handoff}")
        await pilot.press("enter")
        detail = app.screen
        await wait_for(pilot, lambda: getattr(detail, "loads", 0) > 0)
        assert "arquiteto → infra" in str(detail.query_one("#record", Static).render())
        await pilot.press("escape")
        await _select(pilot, screen, f"pr:{world.dev_ready}")
        await pilot.press("enter")
        assert isinstance(app.screen, PrDetailScreen)
        pr_screen = app.screen
        await wait_for(pilot, lambda: pr_screen.detail is not None)
        assert pr_screen.detail is not None
        assert pr_screen.detail.kind == "dev"
        assert "a:act('approve')" in _active(app)  # the PR's own Inbox keys


async def test_the_approval_detail_updates_live_when_someone_else_decides(
    make_app: Factory, live: Live, world: World
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _inbox(pilot)
        await _select(pilot, screen, f"action_approval:{world.adr_approval}")
        await pilot.press("enter")
        detail = app.screen
        assert isinstance(detail, ItemDetailScreen)
        await wait_for(pilot, lambda: detail.loads > 0)
        live.http.post(
            f"/api/approvals/{world.adr_approval}/reject",
            json={"operator": "carol", "reason": "later"},
        ).raise_for_status()
        record = detail.query_one("#record", Static)
        await wait_for(pilot, lambda: "rejected by carol" in str(record.render()), timeout=20)
        # Decided elsewhere: the summary says so and the keys that no longer apply go.
        summary = detail.query_one("#summary", Static)
        await wait_for(pilot, lambda: "state rejected" in str(summary.render()), timeout=20)
        await wait_for(pilot, lambda: not _active(app), timeout=20)


async def test_a_stale_approve_is_sent_and_the_servers_409_is_shown(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _inbox(pilot)
        await _select(pilot, screen, f"pr:{world.dev_ready}")
        proxy.drop_streams(refuse=True)  # the console hears nothing of what follows
        await wait_for(pilot, lambda: app.connection == "reconnecting")
        live.http.post(
            f"/api/prs/{world.dev_ready}/approve", json={"operator": "carol"}
        ).raise_for_status()
        await pilot.press("a", "y")  # the console's copy says awaiting_human: it sends
        path = f"/api/prs/{world.dev_ready}/approve"
        await wait_for(pilot, lambda: proxy.calls("POST", path))
        await wait_for(pilot, lambda: any("409" in (n.title or "") for n in app._notifications))
        await wait_for(pilot, lambda: f"pr:{world.dev_ready}" not in _rows(app), timeout=20)


async def test_readonly_inbox_dims_and_refuses(make_app: Factory, proxy: FaultProxy) -> None:
    app = make_app(readonly=True)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _inbox(pilot)
        for _ in range(len(app.inbox)):
            await pilot.press("a", "x", "u", "c", "d")
            assert app.screen is screen
            await pilot.press("j")
        await pilot.pause(0.3)
        assert not [r for r in proxy.requests if r[0] == "POST"]
        assert any("read-only console" in n.message for n in app._notifications)


async def test_g_reruns_and_x_drops_a_stopped_job(
    make_app: Factory, proxy: FaultProxy, live: Live
) -> None:
    # Two jobs of a kind no worker runs, each out of attempts: the engine buried them.
    store = live.backend.jobs.store
    ids = []
    for n in range(2):
        ident, _ = store.enqueue("bench", {"n": n}, run_at=0.0, max_attempts=1)
        [job] = store.claim("bench", "test-worker", limit=1, lease_s=60)
        assert store.bury(job, error=f"crashed {n}")
        ids.append(ident)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _inbox(pilot)
        for ident, key, verb in ((ids[0], "g", "rerun"), (ids[1], "x", "drop")):
            item = f"job_dead:{ident}"
            await wait_for(pilot, lambda item=item: item in _rows(app))
            await _select(pilot, screen, item)
            assert {"g:act('rerun')", "x:act('drop')"} <= _active(app)
            await pilot.press(key)
            assert isinstance(app.screen, ConfirmScreen)
            assert f"stopped job {ident}" in str(app.screen.query_one(".title", Label).content)
            await pilot.press("y")
            path = f"/api/jobs/{ident}/{verb}"
            await wait_for(pilot, lambda path=path: proxy.calls("POST", path), timeout=20)
            assert proxy.calls("POST", path)[0]["operator"] == "alice"
            await wait_for(pilot, lambda item=item: item not in _rows(app), timeout=20)
        assert store.get(ids[1]).state != "dead"


async def test_o_resumes_atendimento_for_a_customer_no_agent_would_answer(
    make_app: Factory, proxy: FaultProxy, live: Live
) -> None:
    live.http.post("/api/agents/atendimento/pause", json={"reason": "upgrade"}).raise_for_status()
    conversa = live.http.get("/api/inbox", params={"kind": "interruption"}).json()[0]
    customer = live.backend.guard.conversations.state(conversa["title"].split(" in ")[-1])
    sent = live.http.post(
        "/api/conversations/conv-quiet/messages",
        json={"text": "alguém aí?", "cliente_id": customer.cliente_id or "c-1"},
    )
    assert sent.json()["state"] == "paused", sent.text
    item = "unanswered:conv-quiet"
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _inbox(pilot)
        await wait_for(pilot, lambda: item in _rows(app))
        await _select(pilot, screen, item)
        assert "o:act('resume')" in _active(app)
        await pilot.press("o")
        assert isinstance(app.screen, ConfirmScreen)
        assert "conv-quiet" in str(app.screen.query_one(".title", Label).content)
        await pilot.press("y")
        path = "/api/agents/atendimento/resume"
        await wait_for(pilot, lambda: proxy.calls("POST", path), timeout=20)
        await wait_for(pilot, lambda: item not in _rows(app), timeout=30)
    messages = live.http.get("/api/conversations/conv-quiet").json()["messages"]
    assert [m["autor"] for m in messages] == ["cliente", "agente"]  # answered after resume
