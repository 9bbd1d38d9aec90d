"""Command palette (``ctrl+p`` and ``:``): jump to screens, items and agents by name."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape
from textual.screen import Screen

from console.inert import inert

if TYPE_CHECKING:
    from console.app import CadenciaConsole


class ConsoleCommands(Provider):
    """Screens, agents (pause/resume, turns), infra PRs and interruptions, each a command."""

    def _commands(self) -> list[tuple[str, Callable[[], object], str]]:
        from console.screens.agent_turns import AgentTurnsScreen
        from console.screens.audit import AuditScreen
        from console.screens.interruption_detail import InterruptionDetailScreen
        from console.screens.item_details import open_item
        from console.screens.pr_detail import PrDetailScreen

        app = cast("CadenciaConsole", self.app)
        found: list[tuple[str, Callable[[], object], str]] = [
            ("Go to Team", partial(app.run_action, "show('team')"), "roster and activity (1)"),
            ("Go to Inbox", partial(app.run_action, "show('inbox')"), "what waits on you (2)"),
            (
                "Go to Approvals",
                partial(app.run_action, "show('approvals')"),
                "PRs, takeovers and uncertain refunds by list (3)",
            ),
            (
                "Audit trail",
                lambda: app.push_screen(AuditScreen()),
                "every operator action: who, what, target, reason, outcome",
            ),
            ("Refresh", app.action_refresh, "refetch roster and approvals (r)"),
            ("Pause / resume live updates", app.action_toggle_pause, "(space)"),
            (
                "Dismiss notifications",
                app.clear_notifications,
                "close every toast, the ones that stay until dismissed too",
            ),
        ]
        for agent in app.roster.values():
            verb = "Resume" if agent.status == "paused" else "Pause"
            found.append(
                (
                    f"{verb} agent {agent.id}",
                    partial(app.request_agent_pause, agent),
                    f"{agent.status} · every project · asks y/n (p on Team)",
                )
            )
            found.append(
                (
                    f"Turns of {agent.id}",
                    partial(_push, app, AgentTurnsScreen, agent.id),
                    "messages, tool calls and results, tokens (t on Team)",
                )
            )
        for entry in app.inbox:
            found.append(
                (
                    f"Open {entry.kind} {entry.target_id}: {entry.title}",
                    partial(open_item, app, entry),
                    f"{entry.state} · {entry.project_name or ''}",
                )
            )
        for pr in app.approvals.infra_prs:
            found.append(
                (
                    f"Open PR {pr.pr_id or pr.pr_action_id}: {pr.title}",
                    partial(_push, app, PrDetailScreen, pr.pr_action_id),
                    pr.gate_status,
                )
            )
        for item in app.approvals.interruptions:
            found.append(
                (
                    f"Open interruption #{item.id} {item.conversation} {item.ferramenta}",
                    partial(_push, app, InterruptionDetailScreen, item.id),
                    f"{item.motivo} · {item.status}",
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


def _push(app: CadenciaConsole, screen_type: Callable[[Any], Screen[Any]], key: Any) -> None:
    """Build the detail screen only when the command is chosen."""
    app.push_screen(screen_type(key))
