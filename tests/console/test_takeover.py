"""The takeover screen driven with Pilot against the real backend: reply, execute, edit,
deny, hand back, grant, a customer writing while claimed, and uncertain outcomes.

The world's two takeovers are on orders the agent already refunded once (its first
attempt was ``executado``); a takeover whose refund was declined is made here through the
backend's own orchestrator, as the agent would have made it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from textual.widgets import Button, Input, Label, Static

from console.app import CadenciaConsole
from console.dialogs import ConfirmScreen, FormScreen
from console.screens.approvals import ApprovalsScreen
from console.screens.interruption_detail import InterruptionDetailScreen
from tests.console.conftest import toasts, until_live, wait_for
from tests.console.fault_proxy import FaultProxy
from tests.console.world import Live, World

Factory = Callable[..., CadenciaConsole]
REFUND = "emitir-reembolso"


def _text(app: CadenciaConsole, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).content)


def _title(app: CadenciaConsole) -> str:
    return str(app.screen.query_one("#conversation-title", Label).content)


def _selected_uncertain_id(app: CadenciaConsole) -> str:
    screen = app.screen
    item = screen.current_item() if isinstance(screen, ApprovalsScreen) else None
    return item.target_id if item and item.kind == "uncertain" else ""


def _claim(live: Live, takeover: int, operator: str = "alice") -> None:
    live.http.post(
        f"/api/interruptions/{takeover}/claim", json={"operator": operator}
    ).raise_for_status()


def _debits(live: Live, pedido: str) -> int:
    return sum(1 for d in live.backend.guard.simulator.debits() if d.pedido_id == pedido)


def _declined_takeover(live: Live, conversa: str, pedido: str) -> int:
    """An order refunded for the wrong amount until the teto de voltas: every attempt
    ``falhou`` (above the order's value), the last one opens the takeover; alice claims
    it and the customer writes (no model turn runs while a human holds it)."""
    from backend.erp.seed import upsert_pedidos

    upsert_pedidos(
        live.backend.db, [{"pedidoId": pedido, "valorPedido": "59.90", "clienteId": "c-9"}]
    )
    live.backend.guard.conversations.bind(conversa, "c-9")
    for _ in range(5):
        live.backend.guard.orchestrator.call(
            conversa, REFUND, {"pedidoId": pedido, "valor": "599.00"}
        )
    items = live.http.get("/api/approvals").json()["interruptions"]
    takeover = int(next(i["id"] for i in items if i["conversation"] == conversa))
    _claim(live, takeover)
    said = live.http.post(f"/api/conversations/{conversa}/messages", json={"text": "E aí?"})
    assert said.json()["reply"] is None
    return takeover


async def _open(pilot, app: CadenciaConsole, takeover: int) -> InterruptionDetailScreen:  # type: ignore[no-untyped-def]
    await until_live(pilot)
    app.push_screen(InterruptionDetailScreen(app, takeover))
    await wait_for(
        pilot,
        lambda: (
            isinstance(app.screen, InterruptionDetailScreen)
            and app.screen.detail is not None
            and app.screen.conversation is not None
        ),
    )
    screen = app.screen
    assert isinstance(screen, InterruptionDetailScreen)
    return screen


async def _fill(pilot, *answers: str) -> None:  # type: ignore[no-untyped-def]
    """Type each answer in a FormScreen line and press enter (the last enter submits)."""
    assert isinstance(pilot.app.screen, FormScreen)
    for answer in answers:
        await pilot.press(*answer, "enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ConfirmScreen))


async def test_reply_twice_reaches_the_channel_with_delivery_shown(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    takeover = world.open_takeover
    _claim(live, takeover)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _open(pilot, app, takeover)
        assert "held by human: alice" in _title(app)
        await pilot.press("i", *"Oi, aqui é a Alice", "enter")
        await wait_for(pilot, lambda: "Oi, aqui é a Alice" in _text(app, "#transcript"))
        assert app.screen.query_one("#reply", Input).value == ""  # ready for the next one
        await pilot.press(*"Vou verificar o pedido 4821", "enter")
        await wait_for(pilot, lambda: "Vou verificar o pedido 4821" in _text(app, "#transcript"))
        assert proxy.calls("POST", f"/api/interruptions/{takeover}/reply") == [
            {"operator": "alice", "text": "Oi, aqui é a Alice"},
            {"operator": "alice", "text": "Vou verificar o pedido 4821"},
        ]
        # Both reach the customer's channel, and the screen says so per message.
        await wait_for(pilot, lambda: _text(app, "#transcript").count("✓ delivered") >= 2)
        sent = [e["texto"] for e in live.backend.channel_simulator.received()]
        assert "Oi, aqui é a Alice" in sent
        assert "Vou verificar o pedido 4821" in sent


async def test_a_customer_message_appears_live_and_the_bot_stays_quiet(
    make_app: Factory, live: Live, world: World
) -> None:
    takeover = world.open_takeover
    _claim(live, takeover)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _open(pilot, app, takeover)
        agent_lines = sum(
            1
            for m in (screen.conversation.messages if screen.conversation else [])
            if m.autor == "agente"
        )
        answer = live.http.post("/api/conversations/c-17/messages", json={"text": "Alguém aí?"})
        assert answer.json()["reply"] is None
        await wait_for(pilot, lambda: "Alguém aí?" in _text(app, "#transcript"))
        assert screen.conversation is not None
        assert sum(1 for m in screen.conversation.messages if m.autor == "agente") == agent_lines


async def test_execute_on_an_already_refunded_order_shows_the_ledger_and_stays_open(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    takeover = world.open_takeover
    _claim(live, takeover)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _open(pilot, app, takeover)
        assert "already ran: 129.90" in _text(app, "#ledger")
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, FormScreen))
        await _fill(pilot, "reembolso feito")
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen)
        assert "a second emitir-reembolso will be blocked" in confirm._body
        assert "in c-17" in confirm._body
        assert confirm.focused is confirm.query_one("#no", Button)  # default No
        await pilot.press("y")
        await wait_for(pilot, lambda: any("Blocked by the ledger" in t for t in toasts(app)))
        assert not any("done" in t or "executado:" in t for t in toasts(app))
        await wait_for(pilot, lambda: "blocked by the ledger" in _text(app, "#outcome"))
        assert "129.90" in _text(app, "#outcome")
        assert proxy.calls("POST", f"/api/interruptions/{takeover}/resolve") == [
            {"operator": "alice", "action": "execute", "reply": "reembolso feito"}
        ]
        assert _debits(live, "4821") == 1  # the world's one refund, never a second
        item = live.http.get(f"/api/interruptions/{takeover}").json()
        assert (item["status"], item["claimed_by"]) == ("claimed", "alice")


async def test_execute_shows_the_real_falhou_then_edit_with_a_corrected_valor_executes(
    make_app: Factory, proxy: FaultProxy, live: Live
) -> None:
    takeover = _declined_takeover(live, "c-90", "7001")
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _open(pilot, app, takeover)
        assert "failed earlier" in _text(app, "#ledger")
        # As the agent asked (599.00 for a 59.90 order): the gateway refuses again.
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, FormScreen))
        await _fill(pilot, "vamos tentar")
        await pilot.press("y")
        await wait_for(pilot, lambda: "falhou" in _text(app, "#outcome"))
        assert not any("executado:" in t for t in toasts(app))
        assert _debits(live, "7001") == 0
        # Edit: the right amount, with a reason; exactly one debit.
        await wait_for(pilot, lambda: isinstance(app.screen, InterruptionDetailScreen))
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, FormScreen))
        await pilot.press(*("backspace",) * 6)  # the pre-filled 599.00
        await _fill(pilot, "59.90", "valor do pedido", "reembolso de 59,90 emitido")
        confirm = app.screen
        assert isinstance(confirm, ConfirmScreen)
        assert "with valor [b]59.90[/b]" in confirm._body
        await pilot.press("y")
        await wait_for(pilot, lambda: "executado" in _text(app, "#outcome"))
        assert any("executado: emitir-reembolso ran once" in t for t in toasts(app))
        calls = proxy.calls("POST", f"/api/interruptions/{takeover}/resolve")
        assert calls[-1] == {
            "operator": "alice",
            "action": "execute",
            "reply": "reembolso de 59,90 emitido",
            "valor": "59.90",
            "reason": "valor do pedido",
        }
        assert _debits(live, "7001") == 1


async def test_edit_refuses_a_bad_valor_and_a_missing_reason_before_sending(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    takeover = world.open_takeover
    _claim(live, takeover)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _open(pilot, app, takeover)
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, FormScreen))
        await pilot.press(*("backspace",) * 6, *"abc", "enter")
        assert "number" in _text(app, "#error")
        await pilot.press(*("backspace",) * 3, *"10.00", "enter", "enter")  # blank reason
        assert "required" in _text(app, "#error")
        assert isinstance(app.screen, FormScreen)
        await pilot.press("escape")
        assert proxy.calls("POST", f"/api/interruptions/{takeover}/resolve") == []


async def test_deny_returns_the_conversation_to_the_bot(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    takeover = world.open_takeover
    _claim(live, takeover)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _open(pilot, app, takeover)
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, FormScreen))
        await _fill(pilot, "o reembolso já foi emitido")
        await pilot.press("y")
        await wait_for(pilot, lambda: "denied" in _text(app, "#outcome"))
        await wait_for(pilot, lambda: "held by bot" in _title(app))
        assert proxy.calls("POST", f"/api/interruptions/{takeover}/resolve") == [
            {"operator": "alice", "action": "deny", "reply": "o reembolso já foi emitido"}
        ]
        await wait_for(pilot, lambda: all(i.id != takeover for i in app.approvals.interruptions))


def _no_item_keys(app: CadenciaConsole) -> bool:
    return not any(b.binding.action.startswith("act(") for b in app.screen.active_bindings.values())


async def test_hand_back_without_a_reply_leaves_no_key(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    takeover = world.open_takeover
    _claim(live, takeover)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _open(pilot, app, takeover)
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, FormScreen))
        await _fill(pilot, "")  # the reply is optional for a hand back
        await pilot.press("y")
        await wait_for(pilot, lambda: "handed back" in _text(app, "#outcome"))
        await wait_for(pilot, lambda: "held by bot" in _title(app))
        assert proxy.calls("POST", f"/api/interruptions/{takeover}/resolve") == [
            {"operator": "alice", "action": "hand_back"}
        ]
        # Resolved: it left the Inbox, and with it every takeover key of the footer.
        await wait_for(pilot, lambda: _no_item_keys(app))


async def test_grant_attempts_with_a_reason_hands_the_conversation_back(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    takeover = world.open_takeover
    _claim(live, takeover)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _open(pilot, app, takeover)
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, FormScreen))
        await _fill(pilot, "2", "cliente pediu de novo, supervisionado")
        assert "2[/b] more times" in app.screen._body  # type: ignore[attr-defined]
        assert f"takeover #{takeover}" in str(app.screen.query_one(".title", Label).content)
        await pilot.press("y")
        await wait_for(pilot, lambda: "granted 2 more attempts" in _text(app, "#outcome"))
        assert proxy.calls("POST", f"/api/interruptions/{takeover}/grant") == [
            {"operator": "alice", "attempts": 2, "reason": "cliente pediu de novo, supervisionado"}
        ]
        after = int(live.backend.events.last_id()) - 20
        recent = live.http.get("/api/events", params={"after": after}).json()
        assert "interrupcao.concedida" in [e["type"] for e in recent]
        await wait_for(pilot, lambda: "held by bot" in _title(app))  # a grant hands back
        await wait_for(pilot, lambda: _no_item_keys(app))


async def test_actions_need_the_takeover_and_no_stays_the_default(
    make_app: Factory, proxy: FaultProxy, world: World
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await _open(pilot, app, world.open_takeover)  # nobody has claimed it
        assert app.screen.query_one("#reply", Input).disabled
        # Only what the server offers an open takeover: take it over, or grant attempts.
        offered = {b.binding.action for b in app.screen.active_bindings.values() if b.binding.show}
        assert {"act('claim')", "act('grant')"} <= offered
        assert not offered & {"act('execute')", "act('deny')", "act('hand_back')"}
        await pilot.press("e")
        await pilot.pause(0.2)
        assert isinstance(app.screen, InterruptionDetailScreen)  # e does nothing here
        await pilot.press("t")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("enter")  # focus is on No: a stray enter cancels
        assert isinstance(app.screen, InterruptionDetailScreen)
        assert proxy.calls("POST", f"/api/interruptions/{world.open_takeover}/claim") == []


async def test_readonly_dims_the_takeover_keys_and_says_why(
    make_app: Factory, proxy: FaultProxy, live: Live, world: World
) -> None:
    _claim(live, world.open_takeover)
    app = make_app(readonly=True, operator="alice")
    async with app.run_test(size=(120, 40)) as pilot:
        await _open(pilot, app, world.open_takeover)
        box = app.screen.query_one("#reply", Input)
        assert box.disabled
        assert "read-only console" in box.placeholder
        for key in ("e", "v", "d", "h", "g"):
            await pilot.press(key)
            await pilot.pause(0.05)
            assert isinstance(app.screen, InterruptionDetailScreen)
        assert sum("read-only console" in t for t in toasts(app)) >= 5
        assert [c for c in proxy.requests if c[0] == "POST"] == []


async def test_uncertain_items_are_listed_and_reconciled_or_settled(
    make_app: Factory, proxy: FaultProxy, live: Live
) -> None:
    from backend.erp.seed import upsert_pedidos

    upsert_pedidos(
        live.backend.db,
        [
            {"pedidoId": "8001", "valorPedido": "40.00", "clienteId": "c-81"},
            {"pedidoId": "8002", "valorPedido": "41.00", "clienteId": "c-82"},
        ],
    )
    for customer in ("c-81", "c-82"):  # each conversation is its own customer's
        live.backend.guard.conversations.bind(customer, customer)
    gateway = live.backend.guard.simulator
    timeout = live.settings.gateway_timeout_s

    def refund(conversa: str, pedido: str, valor: str) -> str:
        # The gateway debits, then answers after the client gave up: nobody knows.
        args = {"pedidoId": pedido, "valor": valor}
        return str(live.backend.guard.orchestrator.call(conversa, REFUND, args).resultado)

    gateway.fail_next("timeout_after_debit", delay_s=timeout + 0.5)
    gateway.fail_next("timeout_after_debit", delay_s=timeout + 0.5)
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(refund, ("c-81", "c-82"), ("8001", "8002"), ("40.00", "41.00")))
    assert got == ["resultado_incerto", "resultado_incerto"]
    time.sleep(0.6)  # the gateway's late answers are in; only the console does not know
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await pilot.press("3")
        assert isinstance(app.screen, ApprovalsScreen)
        await wait_for(pilot, lambda: len(app.approvals.uncertain) == 2)
        await pilot.press("tab", "tab")  # PRs → takeovers → uncertain refunds
        first = next(u for u in app.approvals.uncertain if u.id == _selected_uncertain_id(app))
        second = next(u for u in app.approvals.uncertain if u.id != first.id)
        # Reconcile: the gateway says the money moved.
        await pilot.press("c")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await wait_for(pilot, lambda: [u.id for u in app.approvals.uncertain] == [second.id])
        assert app.outcomes[f"unc:{first.id}"].severity == "information"
        assert proxy.calls("POST", f"/api/uncertain/{first.id}/reconcile") == [
            {"operator": "alice"}
        ]
        # Settle by hand: a reason is required.
        await wait_for(pilot, lambda: _selected_uncertain_id(app) == second.id)
        await pilot.press("s")
        assert isinstance(app.screen, FormScreen)
        await pilot.press(*"executado", "enter", "enter")
        assert "required" in _text(app, "#error")
        await _fill(pilot, "conferido no painel do gateway")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.approvals.uncertain == [])
        assert proxy.calls("POST", f"/api/uncertain/{second.id}/settle") == [
            {
                "operator": "alice",
                "outcome": "executado",
                "reason": "conferido no painel do gateway",
            }
        ]
        assert _debits(live, "8001") == 1
        assert _debits(live, "8002") == 1
