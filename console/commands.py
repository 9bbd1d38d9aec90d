"""Command palette (``ctrl+p`` and ``:``): jump to screens, items and agents by name."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.app import App
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape
from textual.screen import Screen

from console.inert import inert
from console.screens._base import ConsoleScreen


class ConsoleCommands(Provider):
    """Screens, agents (pause/resume, turns) and every Inbox item, each a command."""

    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        from console.screens.agent_turns import AgentTurnsScreen
        from console.screens.audit import AuditScreen
        from console.screens.item_details import open_item

        app = self.app
        screen = self.screen
        if not isinstance(screen, ConsoleScreen):
            return []
        view = screen.view
        found: list[tuple[str, Callable[[], object], str]] = [
            ("Go to Team", partial(app.run_action, "show('team')"), "roster and activity (1)"),
            ("Go to Inbox", partial(app.run_action, "show('inbox')"), "what waits on you (2)"),
            (
                "Go to Approvals",
                partial(app.run_action, "show('approvals')"),
                "the Inbox by kind: PRs, takeovers, refunds, held actions, handoffs (3)",
            ),
            (
                "Go to Shift",
                partial(app.run_action, "show('shift')"),
                "open for the next person: breached first, who holds each takeover (4)",
            ),
            (
                "Audit trail",
                lambda: app.push_screen(AuditScreen(view)),
                "every operator action: who, what, target, reason, outcome",
            ),
            ("Refresh", partial(app.run_action, "refresh"), "refetch roster and approvals (r)"),
            ("Pause / resume live updates", partial(app.run_action, "toggle_pause"), "(space)"),
            (
                "Dismiss notifications",
                app.clear_notifications,
                "close every toast, the ones that stay until dismissed too",
            ),
        ]
        for agent in view.roster.values():
            verb = "Resume" if agent.status == "paused" else "Pause"
            found.append(
                (
                    f"{verb} agent {agent.id}",
                    partial(view.actions.pause_agent, agent),
                    f"{agent.status} · every project · asks y/n (p on Team)",
                )
            )
            found.append(
                (
                    f"Turns of {agent.id}",
                    partial(_push, app, AgentTurnsScreen, view, agent.id),
                    "messages, tool calls and results, tokens (t on Team)",
                )
            )
        for entry in view.inbox:
            found.append(
                (
                    f"Open {entry.kind} {entry.target_id}: {entry.title}",
                    partial(open_item, app, view, entry),
                    f"{entry.state} · {entry.project_name or ''}",
                )
            )
        return found

    async def discover(self) -> Hits:
        """Everything, when nothing is typed yet."""
        for name, callback, help_text in self._commands():
            yield DiscoveryHit(_shown(name), callback, help=_shown(help_text))

    async def search(self, query: str) -> Hits:
        """Fuzzy match on the command names."""
        matcher = self.matcher(query)
        for name, callback, help_text in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(_shown(name)), callback, help=_shown(help_text))


def _shown(text: str) -> str:
    # The palette reads names and help as markup; PR titles and inbox items are not ours.
    return escape(inert(text, multiline=False))


def _push(app: App[Any], screen_type: Callable[..., Screen[Any]], view: object, key: Any) -> None:
    """Build the detail screen only when the command is chosen."""
    app.push_screen(screen_type(view, key))
