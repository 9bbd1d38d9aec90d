"""``dev-offline``: the deterministic stand-in model of a ``dev-<module>`` agent.

No network and no script: it reads the task header the dev runtime puts at the top of each
turn (:func:`task_header`) and the results of its own tool calls in this turn, and does
what a careful developer of a documentation task does, one tool call per step, through the
same tools and the same runtime as any model (:class:`DevOfflineModel` lists the steps).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from backend.agents.providers.base import (
    Message,
    ModelTurn,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
    result_object,
)

DEV_OFFLINE = "dev-offline"
_HEADER = re.compile(
    r"^(?P<title>[^\n]*) — task (?P<task>\S+), module (?P<module>\S+), path (?P<path>\S+)$",
    re.MULTILINE,
)


def task_header(task_id: str, module: str, path: str, title: str) -> str:
    """The first line of every dev turn's message (the offline model reads it; the title
    first, so the roster's "thinking about" detail names the task)."""
    return f"{title} — task {task_id}, module {module}, path {path}"


@dataclass(frozen=True)
class _Task:
    id: str
    module: str
    path: str
    title: str

    @property
    def readme(self) -> str:
        if self.path == ".":
            return "README.md"
        return (PurePosixPath(self.path) / "README.md").as_posix()


class DevOfflineModel:
    """The offline dev model.

    1. ``list_files`` on the module;
    2. ``read_file`` of the module's ``README.md`` (when it exists);
    3. ``write_file`` of that README with one line for the task (``- <title> (by dev-<m>)``);
    4. ``propose_task_pr``; then it answers with what the PR did.

    A failing ``list_files``/``read_file``/``write_file`` makes it call ``report_blocked`` with
    the tool's error; a failing proposal is reported in its answer (the worker then records
    why the task stopped).
    """

    name = DEV_OFFLINE

    def __init__(self, agent_id: str = "dev") -> None:
        self.agent_id = agent_id

    async def complete(
        self, *, system: str, messages: list[Message], tools: list[ToolSpec]
    ) -> ModelTurn:
        """The next step of the routine, from this turn's messages."""
        users = [(i, m) for i, m in enumerate(messages) if isinstance(m, UserMessage)]
        if not users:
            return ModelTurn(text="I have no task to work on in this message.")
        start, user = users[-1]
        found = _HEADER.search(user.text)
        if found is None:
            return ModelTurn(text="I have no task to work on in this message.")
        task = _Task(found["task"], found["module"], found["path"], found["title"])
        results = [m for m in messages[start + 1 :] if isinstance(m, ToolResultMessage)]
        step = len(results)
        last = results[-1] if results else None
        if last is not None and last.name == "propose_task_pr":
            return ModelTurn(text=_proposed(last))
        if last is not None and last.name == "report_blocked":
            return ModelTurn(text=f"Task {task.id} is blocked; I wait for help.")
        if last is not None and last.is_error:
            reason = f"{last.name} failed: {_error(last)}"
            return self._call(task, step, "report_blocked", {"task_id": task.id, "reason": reason})
        if last is None:
            return self._call(task, step, "list_files", {"path": task.path})
        if last.name == "list_files":
            listed = result_object(last).get("files") or []
            if task.readme in listed:
                return self._call(task, step, "read_file", {"path": task.readme})
            return self._write(task, step, f"# {task.module}\n")
        if last.name == "read_file":
            return self._write(task, step, str(result_object(last).get("content") or ""))
        # After write_file: propose what was written.
        return self._call(task, step, "propose_task_pr", {"task_id": task.id})

    def _write(self, task: _Task, step: int, current: str) -> ModelTurn:
        line = f"- {task.title} (by {self.agent_id})\n"
        content = current if line in current else current.rstrip("\n") + "\n\n" + line
        return self._call(task, step, "write_file", {"path": task.readme, "content": content})

    def _call(self, task: _Task, step: int, name: str, arguments: dict[str, Any]) -> ModelTurn:
        call = ToolCall(id=f"{self.agent_id}-{task.id}-s{step}", name=name, arguments=arguments)
        return ModelTurn(text=None, tool_calls=(call,), stop_reason="tool_use")


def _error(message: ToolResultMessage) -> str:
    return str(result_object(message).get("error") or message.content)


def _proposed(message: ToolResultMessage) -> str:
    if message.is_error:
        return f"I could not open the PR: {_error(message)}"
    body = result_object(message)
    return f"PR {body.get('pr_action_id')} is {body.get('gate_status')} on {body.get('branch')}."
