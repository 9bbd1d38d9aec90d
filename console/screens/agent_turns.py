"""An agent's recent turns (``t`` or ``enter`` on the Team screen): what it was told, what
it said, every tool call with its arguments and what the tool answered, tokens and model.

Read from ``GET /api/agents/{id}/turns`` (the agent's ``agent.turn`` events), newest first;
``r`` fetches again.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from rich.console import Group
from rich.text import Text
from textual.binding import BindingType

from console.inert import inert
from console.models_agents import AgentTurn
from console.screens._fetched import FetchedScreen, fetched_bindings
from console.view import ConsoleView

TURNS_SHOWN = 20
CONTENT_MAX = 600
"""A tool result longer than this is cut (the turn event keeps all of it)."""


def _clip(value: str, limit: int = CONTENT_MAX) -> str:
    # Everything clipped here was written by a model, a customer or a tool: shown inert.
    value = inert(value)
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _arguments(value: Any) -> str:
    return _clip(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str), 300)


def _readable(content: str) -> str:
    """A tool result as the operator reads it: JSON re-printed with its accents (the runtime
    sends models ASCII-escaped JSON, "N\\u00e3o"), anything else as it is."""
    try:
        return json.dumps(json.loads(content), ensure_ascii=False)
    except ValueError:
        return content


def _message(m: dict[str, Any]) -> Text:
    role = m.get("role")
    if role == "user":
        return Text.assemble(("  user ", "bold cyan"), _clip(str(m.get("text") or "")))
    if role == "assistant":
        line = Text.assemble(("  assistant ", "bold green"), _clip(str(m.get("text") or "")))
        for call in m.get("tool_calls") or []:
            bad = f"  (invalid: {_clip(str(call['error']))})" if call.get("error") else ""
            line.append_text(
                Text.assemble(
                    "\n    → ",
                    (_clip(str(call.get("name", "?")), 80), "bold yellow"),
                    f"({_arguments(call.get('arguments') or {})})",
                    (bad, "red"),
                )
            )
        return line
    error = bool(m.get("is_error"))
    return Text.assemble(
        ("    ← ", "bold"),
        (_clip(str(m.get("name", "tool")), 80), "yellow"),
        (" error" if error else "", "bold red"),
        ": ",
        (_clip(_readable(str(m.get("content") or ""))), "red" if error else ""),
    )


def render_turn(turn: AgentTurn) -> Group:
    """One turn: a header (number, when, model, tokens, how it ended), then its messages."""
    tokens = (
        f"{turn.usage.input_tokens} in / {turn.usage.output_tokens} out"
        if turn.usage
        else "tokens —"
    )
    where = turn.session_id or "-"
    header = Text.assemble(
        (f"turn {turn.turn if turn.turn is not None else '?'}", "bold reverse"),
        f"  {turn.ts.replace('T', ' ')[:19]} · ",
        (inert(turn.model or "model —"), "magenta"),
        inert(f" · {tokens} · {turn.stop_reason or '?'} · session {where}"),
    )
    return Group(header, *(_message(m) for m in turn.messages), Text(""))


class AgentTurnsScreen(FetchedScreen):
    """The newest turns of one agent, scrollable."""

    TITLE = "Turns"
    BINDINGS: ClassVar[list[BindingType]] = fetched_bindings("turns")

    def __init__(self, view: ConsoleView, agent_id: str) -> None:
        super().__init__(view)
        self.agent_id = agent_id
        self.turns: list[AgentTurn] = []

    def loading_text(self) -> str:
        return f"{self.agent_id}: loading…"

    def failed_text(self, message: str) -> str:
        return f"{self.agent_id}: could not load turns: {message}"

    async def fetch(self) -> list[AgentTurn]:
        return await self.view.client.agent_turns(self.agent_id, TURNS_SHOWN)

    def present(self, data: list[AgentTurn]) -> tuple[Text, Group | Text]:
        self.turns = data
        calls = sum(len(t.tool_calls) for t in data)
        line = Text.assemble(
            (self.agent_id, "bold"),
            f": {len(data)} most recent turn{'s' if len(data) != 1 else ''}, newest first"
            f" · {calls} tool call{'s' if calls != 1 else ''} · r refreshes · esc back",
        )
        body: Group | Text = (
            Group(*(render_turn(t) for t in data))
            if data
            else Text("No turns recorded yet.", style="dim")
        )
        return line, body
