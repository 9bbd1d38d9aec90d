"""The ``dev-<module>`` agents: a model (any provider; offline ``dev-offline`` by default)
working one task in its worktree through five tools, on the shared agent runtime.

A turn's session is the task id, so each task has its own conversation (a restart
continues it) and one task's turns never interleave. The tools are confined to the
module's path and there is no shell; which task a turn works on comes from the turn, never
from the model (:class:`DevAgents` lists the tools).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from backend.agents.providers.base import ModelProvider
from backend.agents.providers.dev_offline import task_header
from backend.agents.providers.factory import is_dev_offline, make_provider, model_binding
from backend.agents.runtime import AgentRuntime, ToolImpl, TurnContext, TurnResult
from backend.agents.store import Project
from backend.agents.team import DEV_PREFIX
from backend.agents.team_tools import TaskCreator
from backend.dev.tasks import DevTask, DevTasks, seed_demo_tasks
from backend.dev.worktrees import TaskWorkspace, Worktrees
from backend.exceptions import ConflictError, NotFoundError, ValidationError
from backend.settings import Settings

_CURRENT_ORDER = ("working", "blocked", "todo", "in_review")
"""Which of an agent's tasks an operator's turn is about: the one it works on, else the one
waiting for help, else the next one, else the last one in review."""


class DevAgents:
    """Runs ``dev-<module>`` turns on their tasks.

    A turn's session is the task id, so :meth:`AgentRuntime.history` gives each task its own
    conversation (a restart continues it) and the runtime's per-(session, agent) lock keeps a
    worker's turn and an operator's turn on one task from interleaving. The tools:
    ``list_files`` / ``read_file`` / ``write_file``
    (:class:`~backend.dev.worktrees.TaskWorkspace`, confined to the module's path),
    ``propose_task_pr`` (the worktree's changes through :meth:`DevTasks.propose_task_pr`, the
    one PR pipeline) and ``report_blocked``. There is no shell. Which task a turn works on
    comes from the turn, never from the model: a tool call naming another task is refused.

    Args:
        settings: model bindings and the data dir (worktrees live in ``<data_dir>/worktrees``).
        dev_tasks: tasks and their PRs (the backend's one pipeline).
        scripts: the script a ``scripted`` binding replays for a dev agent that has turns in it.
        runtime_options: extra :class:`AgentRuntime` arguments (the backend's turn checks and
            usage sink), so dev turns are refused and counted like every other turn.
    """

    def __init__(
        self,
        settings: Settings,
        dev_tasks: DevTasks,
        *,
        scripts: Any = None,
        runtime_options: Mapping[str, Any] | None = None,
    ) -> None:
        self.settings = settings
        self.dev_tasks = dev_tasks
        self.scripts = scripts or {}
        self.runtime = AgentRuntime(
            events=dev_tasks.store.events,
            providers=self._provider,
            tools={},
            **dict(runtime_options or {}),
        )

    def _provider(self, agent_id: str, calls_before: int) -> ModelProvider:
        return make_provider(
            model_binding(agent_id, self.settings),
            settings=self.settings,
            scripts=self.scripts,
            agent_id=agent_id,
            start_at=calls_before,
        )

    # -- turns -----------------------------------------------------------------------------

    async def work(self, task_id: str) -> TurnResult:
        """The agent's turn on its task (the worker calls it once the task is claimed)."""
        task = await asyncio.to_thread(self.dev_tasks.get, task_id)
        return await self._turn(task, await asyncio.to_thread(self.brief, task))

    async def operator_turn(self, project_id: str, agent_id: str, text: str) -> TurnResult:
        """An operator's message to a dev agent, given to it on its current task.

        Raises:
            ConflictError: the agent has no task in this project.
        """
        module = agent_id.removeprefix(DEV_PREFIX)
        task = await asyncio.to_thread(self.current_task, project_id, module)
        if task is None:
            raise ConflictError(
                f"{agent_id} has no task in project {project_id}: the PO creates the tasks "
                "of each module (create_task)",
                agent=agent_id,
            )
        brief = await asyncio.to_thread(self.brief, task)
        return await self._turn(task, f"{brief}\n\nThe operator says: {text}")

    async def correction_turn(self, task_id: str, text: str) -> TurnResult | None:
        """The agent corrects its task's PR (``text``: the reason, findings and files), or
        ``None`` when it runs on the offline dev model, which cannot read findings (the
        pipeline's rule-based fixer corrects then)."""
        task = await asyncio.to_thread(self.dev_tasks.get, task_id)
        spec = model_binding(task.agent, self.settings)
        if is_dev_offline(spec, task.agent, self.scripts):
            return None
        brief = await asyncio.to_thread(self.brief, task)
        return await self._turn(task, f"{brief}\n\n{text}")

    async def _turn(self, task: DevTask, text: str) -> TurnResult:
        self.runtime.tools.setdefault(task.agent, self.tools())
        await asyncio.to_thread(self.workspace, task)  # (re)create the worktree first
        return await self.runtime.run_turn(TurnContext(task.project_id, task.id, task.agent), text)

    def current_task(self, project_id: str, module: str) -> DevTask | None:
        """The task an operator's turn on ``dev-<module>`` is about (see ``_CURRENT_ORDER``)."""
        mine = [t for t in self.dev_tasks.tasks(project_id) if t.module == module]
        for status in _CURRENT_ORDER:
            found = [t for t in mine if t.status == status]
            if found:
                return found[-1] if status == "in_review" else found[0]
        return None

    def brief(self, task: DevTask) -> str:
        """What the agent is told about its task at the start of a turn."""
        lines = [task_header(task.id, task.module, self.module_path(task), task.title)]
        if task.description:
            lines.append(f"Description: {task.description}")
        lines.append(f"Status: {task.status}" + (f" ({task.reason})" if task.reason else ""))
        if task.gate_status:
            lines.append(f"PR {task.pr_action_id}: {task.gate_status} on {task.branch}")
        lines.append(
            f"Work in the task's worktree on branch feature/task-{task.id}, only inside "
            f"{self.module_path(task)!r}; call propose_task_pr with task_id {task.id!r} when "
            "the change is written, or report_blocked if you cannot do it."
        )
        return "\n".join(lines)

    # -- the worktree ----------------------------------------------------------------------

    def module_path(self, task: DevTask) -> str:
        """The module's path in the repository (``.`` when the map gives none)."""
        project = self.dev_tasks.store.project(task.project_id)
        for module in project.modules():
            if module.get("name") == task.module:
                return str(module.get("path") or ".").strip("/") or "."
        raise NotFoundError(f"module {task.module!r} is no longer in the module map")

    def workspace(self, task: DevTask) -> TaskWorkspace:
        """The task's worktree (created, or reused after a crash) and its confinement."""
        git = self.dev_tasks.git_for(task)
        worktrees = Worktrees(git.repo_path)
        worktrees.ensure_repo()
        path = self.settings.data_dir / "worktrees" / task.project_id / task.id
        root = worktrees.open(path, f"feature/task-{task.id}")
        return TaskWorkspace(root, self.module_path(task), worktrees)

    def prune(self) -> list[str]:
        """Drop the worktrees of finished tasks (merged or closed; their branches stay);
        the ids of the tasks whose worktree went."""
        root = self.settings.data_dir / "worktrees"
        removed: list[str] = []
        for tree in sorted(root.glob("*/*")) if root.is_dir() else []:
            try:
                task = self.dev_tasks.get(tree.name)
            except NotFoundError:
                continue  # not a task's worktree: not ours to remove
            if task.status in ("done", "closed"):
                Worktrees(self.dev_tasks.git_for(task).repo_path).remove(tree)
                removed.append(task.id)
        return removed

    # -- tools -----------------------------------------------------------------------------

    def tools(self) -> dict[str, ToolImpl]:
        """The dev agent's registry implementations (see :data:`backend.agents.team.DEV_TOOLS`)."""

        def run(fn: Any) -> ToolImpl:
            async def impl(ctx: TurnContext, args: dict[str, Any]) -> dict[str, Any]:
                return dict(await asyncio.to_thread(fn, self._task_of(ctx, args), args))

            return impl

        return {
            "list_files": run(lambda t, a: self.workspace(t).list_files(str(a.get("path") or ""))),
            "read_file": run(lambda t, a: self.workspace(t).read_file(a.get("path"))),
            "write_file": run(
                lambda t, a: self.workspace(t).write_file(a.get("path"), a.get("content"))
            ),
            "propose_task_pr": run(self._propose),
            "report_blocked": run(self._blocked),
        }

    def _task_of(self, ctx: TurnContext, args: dict[str, Any]) -> DevTask:
        if ctx.session_id is None:
            raise ValidationError("a dev agent's turn runs on a task")
        named = args.get("task_id")
        if named is not None and named != ctx.session_id:
            raise ValidationError(
                f"this turn is on task {ctx.session_id}; task {named!r} is not yours now"
            )
        task = self.dev_tasks.get(ctx.session_id)
        if task.agent != ctx.agent_id:
            raise ConflictError(f"task {task.id} belongs to {task.agent}, not {ctx.agent_id}")
        return task

    def _propose(self, task: DevTask, args: dict[str, Any]) -> dict[str, Any]:
        if task.status in ("done", "closed"):
            raise ConflictError(f"task {task.id} is {task.status}: nothing to propose")
        workspace = self.workspace(task)
        proposed = self.dev_tasks.propose_task_pr(task.id, workspace.changes())
        workspace.synced()
        proposed = self.dev_tasks.set_status(task.id, "in_review")
        return {
            "status": "proposed",
            "task_id": task.id,
            "pr_action_id": proposed.pr_action_id,
            "branch": proposed.branch,
            "head": proposed.head,
            "files": list(proposed.files),
            "gate_status": proposed.gate_status,
        }

    def _blocked(self, task: DevTask, args: dict[str, Any]) -> dict[str, Any]:
        reason = str(args.get("reason") or "").strip()
        if not reason:
            raise ValidationError("report_blocked needs a reason")
        blocked = self.dev_tasks.set_status(task.id, "blocked", reason)
        return {"status": blocked.status, "task_id": task.id, "reason": reason}


def task_creator(
    dev_tasks: DevTasks, on_created: Callable[[], object] | None = None
) -> TaskCreator:
    """The PO's ``create_task``: a real ``todo`` task for a module of the module map.

    Args:
        dev_tasks: where the task goes.
        on_created: called after each task is created (wakes the dev worker).
    """

    def create(ctx: TurnContext, args: dict[str, Any]) -> dict[str, Any]:
        if not ctx.project_id:
            raise ValidationError("create_task needs a project")
        task = dev_tasks.create_task(
            ctx.project_id,
            str(args.get("module") or ""),
            str(args.get("title") or ""),
            description=args.get("description"),
            story_id=args.get("story_id"),
            session_id=ctx.session_id,
        )
        if on_created is not None:
            on_created()
        return {
            "task_id": task.id,
            "module": task.module,
            "title": task.title,
            "status": task.status,
        }

    return create


def start_execution(
    dev_tasks: DevTasks, project_id: str, *, demo: bool = False
) -> tuple[Project, list[DevTask]]:
    """Activate execution: the dev agents start on the PO's ``todo`` tasks (``--demo``: plus
    one demo task for each module the PO gave none).

    Raises:
        NotFoundError: no such project.
        ConflictError: no module map, no task to work on (outside ``--demo``), or already
            active; nothing changes.
    """
    project = dev_tasks.store.project(project_id)
    if not project.modules():
        raise ConflictError("the project has no module map yet; the Arquiteto writes it first")
    todo = [t for t in dev_tasks.tasks(project_id) if t.status == "todo"]
    if not todo and not demo:
        raise ConflictError(
            f"project {project_id} has no task for the dev agents: the PO creates them "
            "(create_task, for a module of the module map) before execution starts"
        )
    project = dev_tasks.store.activate_execution(project_id)
    if demo:
        todo += seed_demo_tasks(dev_tasks, project)
    return project, todo
