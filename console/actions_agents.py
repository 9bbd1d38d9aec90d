"""The off switch from the Team screen: ``p`` pauses or resumes the selected agent.

Like every operator action: ask ``y``/No first, send in an App-owned worker, and report
what the backend answered — never what the console expected. A 409 means the roster was
stale (someone else paused or resumed first); no answer at all means nobody knows whether
it took effect, and the operator is told exactly that.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from textual import work

from console.exceptions import ApiError, BackendUnavailableError, ConflictError, NotFoundError
from console.models import RosterEntry
from console.screens.modals import ConfirmScreen

if TYPE_CHECKING:
    from console.app import CadenciaConsole


class AgentActionsMixin:
    """Mixed into :class:`~console.app.CadenciaConsole`."""

    def request_agent_pause(self: CadenciaConsole, entry: RosterEntry) -> None:  # type: ignore[misc]
        """Ask, then pause ``entry``'s agent — or resume it when the roster shows it paused."""
        resume = entry.status == "paused"
        verb = "Resume" if resume else "Pause"
        if self.refuse_if_readonly(f"{verb} agent"):
            return
        if resume:
            who = f" (paused by {escape(entry.paused_by)})" if entry.paused_by else ""
            body = f"[b]{escape(entry.id)}[/b]{who} runs turns again, in every project."
        else:
            body = (
                f"[b]{escape(entry.id)}[/b] runs no new turn, in every project, until resumed.\n"
                "A turn already running finishes."
            )

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self._send_agent_pause(entry.id, resume)
            else:
                self.notify(f"{verb} cancelled — nothing sent", timeout=2)

        self.push_screen(ConfirmScreen(f"{verb} {entry.id}?", body), done)

    @work(group="actions", exit_on_error=False)
    async def _send_agent_pause(self: CadenciaConsole, agent_id: str, resume: bool) -> None:  # type: ignore[misc]
        label = f"{'Resume' if resume else 'Pause'} {agent_id}"
        try:
            if resume:
                state = await self.client.resume_agent(agent_id, self.operator)
            else:
                state = await self.client.pause_agent(agent_id, self.operator)
        except ConflictError as exc:
            self.notify(
                f"{label}: refused — {exc.message}. Roster refreshed.",
                title="Conflict (409)",
                severity="warning",
                timeout=8,
            )
            self.add_feed_line("console.conflict", f"{label} → 409: {exc.message}")
        except NotFoundError as exc:
            self.notify(f"{label}: {exc.message}", title="Unknown agent (404)", severity="error")
            self.add_feed_line("console.error", f"{label} → 404: {exc.message}")
        except BackendUnavailableError as exc:
            text = f"no answer from the backend ({exc.message}); whether it took effect is unknown"
            self.notify(f"{label}: {text} — r refreshes", severity="error", timeout=12)
            self.add_feed_line("console.error", f"{label} → {text}")
        except ApiError as exc:
            self.notify(f"{label} failed ({exc.status}): {exc.message}", severity="error")
            self.add_feed_line("console.error", f"{label} → failed ({exc.status}): {exc.message}")
        else:
            if state.paused:
                text = f"paused by {state.paused_by}; it runs no new turn"
            else:
                text = f"resumed by {state.resumed_by or self.operator}; it runs turns again"
            self.notify(f"{agent_id} {text}", title="✓")
            self.add_feed_line("console.action", f"{agent_id} {text}")
        self.refetch(roster=True)
