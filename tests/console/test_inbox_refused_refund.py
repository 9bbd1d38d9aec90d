"""A refund the bank refused reaches the Inbox with "edit valor" and "deny": the keys the
server's actions offer, each opening the takeover's own flow."""

from __future__ import annotations

from collections.abc import Callable

from textual.widgets import DataTable

from backend.erp.seed import upsert_pedidos
from console.app import CadenciaConsole
from console.dialogs import FormScreen
from console.screens.inbox import InboxScreen
from tests.console.conftest import until_live, wait_for
from tests.console.world import Live

Factory = Callable[..., CadenciaConsole]
REASON = "saldo insuficiente na conta de origem"
ASKS = [
    "Quero o reembolso do pedido 7301",
    "Já caiu?",
    "Ainda não vi o dinheiro",
    "Faz o estorno de novo",
    "Olá? saiu o reembolso?",
]


def _refused_takeover(live: Live) -> str:
    upsert_pedidos(
        live.backend.db, [{"pedidoId": "7301", "valorPedido": "80.00", "clienteId": "c-7301"}]
    )
    for _ in range(4):
        live.backend.guard.simulator.fail_next("refuse", status=402, reason=REASON)
    for text in ASKS:
        said = live.http.post(
            "/api/conversations/conv-7301/messages", json={"text": text, "cliente_id": "c-7301"}
        )
        assert said.status_code == 200, said.text
    [item] = [
        i
        for i in live.http.get("/api/inbox").json()
        if i["kind"] == "interruption" and "7301" in i["title"]
    ]
    live.http.post(f"/api/interruptions/{item['target_id']}/claim", json={"operator": "alice"})
    return str(item["id"])


async def test_v_and_d_on_a_refused_refund_open_the_takeovers_edit_and_deny(
    make_app: Factory, live: Live
) -> None:
    item_id = _refused_takeover(live)
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await until_live(pilot)
        await pilot.press("2")
        screen = app.screen
        assert isinstance(screen, InboxScreen)
        table = screen.query_one("#inbox", DataTable)
        await wait_for(pilot, lambda: item_id in {str(k.value) for k in table.rows})
        # The takeovers' list the Inbox's own flows read is loaded in the background.
        await wait_for(
            pilot, lambda: any("7301" in i.entidade_id for i in app.approvals.interruptions)
        )
        table.move_cursor(row=[str(k.value) for k in table.rows].index(item_id), animate=False)
        await pilot.pause()
        active = {
            f"{b.binding.key}:{b.binding.action}"
            for b in app.screen.active_bindings.values()
            if b.binding.action.startswith("act(")
        }
        assert {"v:act('edit')", "d:act('deny')"} <= active
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, FormScreen))
