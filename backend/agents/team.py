"""The team: who each agent is, its scope, its prompt, and its tool registry — as data.

Session-scoped agents (``criativo``, ``po``, ``arquiteto``, and ``infra`` after an accepted
handoff); project-scoped ``dev-<module>`` and the ``qa`` / ``secops`` singletons, whose
gates are deterministic and need no model tools; and ``atendimento``, the customer-service
agent, whose every tool call goes through the guard. A registry is the *structural* limit
of what a model can ask for (the Infra agent's holds no terminal: seed ADR 0014 §2). Each
tool names the :data:`~backend.agents.policy.ActionType` :func:`decide` rules on, or
``None`` for a direct tool that proposes no action.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal

from backend.agents.policy import ActionType
from backend.agents.providers.base import ToolSpec
from backend.agents.providers.factory import CUSTOMER_SERVICE_AGENT
from backend.exceptions import NotFoundError

Scope = Literal["session", "project", "conversation"]

CRIATIVO = "criativo"
PO = "po"
ARQUITETO = "arquiteto"
INFRA = "infra"
QA = "qa"
SECOPS = "secops"
CUSTOMER_SERVICE = CUSTOMER_SERVICE_AGENT  # defined where its binding is resolved
DEV_PREFIX = "dev-"

SESSION_AGENTS: tuple[str, ...] = (CRIATIVO, PO, ARQUITETO, INFRA)
GATE_AGENTS: tuple[str, ...] = (QA, SECOPS)


@dataclass(frozen=True)
class ToolDef:
    """A tool in a registry: what the model sees, and which action policy rules on."""

    spec: ToolSpec
    action: ActionType | None

    @property
    def name(self) -> str:
        """The tool's name as the model calls it."""
        return self.spec.name


@dataclass(frozen=True)
class AgentDef:
    """One agent of the team."""

    id: str
    role: str
    scope: Scope
    system_prompt: str
    tools: tuple[ToolDef, ...] = ()

    @property
    def conversational(self) -> bool:
        """Whether the agent runs model turns in a session (and emits ``agent.status``)."""
        return self.scope == "session"

    def tool_specs(self) -> list[ToolSpec]:
        """The specs to hand to a :class:`ModelProvider`."""
        return [tool.spec for tool in self.tools]

    def tool(self, name: str) -> ToolDef | None:
        """The registry entry called ``name``, or ``None`` if the agent has no such tool."""
        return next((tool for tool in self.tools if tool.name == name), None)


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


_STR = {"type": "string", "minLength": 1}
_FILES = {
    "type": "array",
    "minItems": 1,
    "items": _obj({"path": _STR, "content": {"type": "string"}}, ["path", "content"]),
}


def _tool(
    name: str, description: str, schema: dict[str, Any], action: ActionType | None
) -> ToolDef:
    return ToolDef(ToolSpec(name, description, schema), action)


CONFIRM_READINESS = _tool(
    "confirm_readiness",
    "Confirm the idea is clear enough to hand to the PO, with a short summary.",
    _obj({"summary": _STR}, ["summary"]),
    "tool_call",
)
CREATE_STORY = _tool(
    "create_story",
    "Add a user story to the backlog.",
    _obj(
        {"title": _STR, "description": _STR, "acceptance": {"type": "array", "items": _STR}},
        ["title", "description"],
    ),
    "tool_call",
)
CREATE_TASK = _tool(
    "create_task",
    "Split a story into a task for one module of the module map (its dev agent takes it).",
    _obj(
        {"story_id": _STR, "module": _STR, "title": _STR, "description": _STR}, ["module", "title"]
    ),
    "tool_call",
)
WRITE_MODULE_MAP = _tool(
    "write_module_map",
    "Record the module map: the deployable modules of the project.",
    _obj(
        {
            "modules": {
                "type": "array",
                "minItems": 1,
                "items": _obj(
                    {
                        "name": _STR,
                        "path": _STR,
                        "language": _STR,
                        "kind": {"type": "string", "enum": ["service", "job", "library"]},
                        "port": {"type": "integer", "minimum": 1, "maximum": 65535},
                    },
                    ["name", "path"],
                ),
            }
        },
        ["modules"],
    ),
    "tool_call",
)
PROPOSE_ADR_PR = _tool(
    "propose_adr_pr",
    "Open a pull request with one architecture decision record.",
    _obj({"title": _STR, "slug": _STR, "content": _STR}, ["title", "content"]),
    "open_adr_pr",
)
VALIDATE_INFRA_FILE = _tool(
    "validate_infra_file",
    "Lint one infrastructure file (Dockerfile, compose, CI) with hadolint and built-in checks. "
    "Runs directly; it never executes the file.",
    _obj({"path": _STR, "content": {"type": "string"}}, ["path", "content"]),
    None,
)
PROPOSE_INFRA_PR = _tool(
    "propose_infra_pr",
    "Propose the infra files as ONE pull request (the session's infra branch). After "
    "changes_requested, call it again with the corrected files: it commits on the same PR.",
    _obj({"title": _STR, "summary": {"type": "string"}, "files": _FILES}, ["title", "files"]),
    "open_infra_pr",
)
LIST_FILES = _tool(
    "list_files",
    "List the files under a path of your module in the task's worktree (default: the whole "
    "module). Paths are relative to the repository root.",
    _obj({"path": {"type": "string"}}, []),
    None,
)
READ_FILE = _tool(
    "read_file",
    "Read one file of your module in the task's worktree (path relative to the repository).",
    _obj({"path": _STR}, ["path"]),
    None,
)
WRITE_FILE = _tool(
    "write_file",
    "Create or replace one file of your module in the task's worktree (path relative to the "
    "repository; only inside your module's path; no symlinks, no .git).",
    _obj({"path": _STR, "content": {"type": "string"}}, ["path", "content"]),
    "tool_call",
)
PROPOSE_TASK_PR = _tool(
    "propose_task_pr",
    "Commit what you wrote in the worktree on the task branch and open the task's pull "
    "request (after changes_requested: a correction on the same PR). The gates run on it.",
    _obj({"task_id": _STR}, ["task_id"]),
    "propose_task_pr",
)
REPORT_BLOCKED = _tool(
    "report_blocked",
    "Say the task cannot go on without help, and why (the task is marked blocked).",
    _obj({"task_id": _STR, "reason": _STR}, ["task_id", "reason"]),
    "tool_call",
)
DEV_TOOLS: tuple[ToolDef, ...] = (
    LIST_FILES,
    READ_FILE,
    WRITE_FILE,
    PROPOSE_TASK_PR,
    REPORT_BLOCKED,
)

_FIXED: dict[str, AgentDef] = {
    CRIATIVO: AgentDef(
        CRIATIVO,
        "creative",
        "session",
        "You are the Criativo. Shape the user's idea with them; when it is clear, call "
        "confirm_readiness.",
        (CONFIRM_READINESS,),
    ),
    PO: AgentDef(
        PO,
        "product owner",
        "session",
        "You are the PO. Turn the confirmed idea into stories, and each story into tasks with "
        "create_task, one module of the Arquiteto's module map per task: that module's dev "
        "agent works on it. A module that is not in the map is refused.",
        (CREATE_STORY, CREATE_TASK),
    ),
    ARQUITETO: AgentDef(
        ARQUITETO,
        "architect",
        "session",
        "You are the Arquiteto. Decide the modules and record decisions as ADR pull requests.",
        (WRITE_MODULE_MAP, PROPOSE_ADR_PR),
    ),
    INFRA: AgentDef(
        INFRA,
        "infrastructure",
        "session",
        "You are the Infra agent. From the module map and the Arquiteto's ADRs, write "
        "Dockerfiles, compose and CI files, validate each with validate_infra_file, then call "
        "propose_infra_pr once with all files. You never apply anything to an environment and "
        "you have no terminal.",
        (VALIDATE_INFRA_FILE, PROPOSE_INFRA_PR),
    ),
    QA: AgentDef(QA, "QA gate", "project", "Deterministic QA gate (hadolint, syntax checks)."),
    SECOPS: AgentDef(
        SECOPS, "SecOps gate", "project", "Deterministic SecOps gate (secret scan, semgrep)."
    ),
}


def dev_agent_id(module: str) -> str:
    """The id of the dev agent for ``module``."""
    return f"{DEV_PREFIX}{module}"


def dev_agent(module: str) -> AgentDef:
    """The dev agent for ``module`` (one per module of the module map)."""
    return AgentDef(
        dev_agent_id(module),
        f"developer ({module})",
        "project",
        f"You are the developer of module {module}. You work on one task at a time, in the "
        "task's own git worktree, and only inside your module's path. Look around with "
        "list_files and read_file, make the change with write_file, then call propose_task_pr "
        "with the task id: it commits your files on the task branch and opens the PR that QA "
        "and SecOps review. After changes_requested, fix the findings and propose again (same "
        "PR). If you cannot do the task, call report_blocked with the reason. You have no "
        "shell and cannot run anything.",
        DEV_TOOLS,
    )


@functools.cache
def customer_service_agent() -> AgentDef:
    """``atendimento``: the three Lab 87 tools, from :mod:`backend.tools.registry`, and
    the prompt of :mod:`backend.agents.customer_prompt`. Built once: rendering the tools'
    JSON schemas costs ~10 ms, too much for every customer turn."""
    from backend.agents.customer_prompt import SYSTEM_PROMPT
    from backend.tools.registry import TOOLS  # the guard owns the tools' specs

    tools = tuple(
        ToolDef(ToolSpec(spec.name, spec.description, spec.json_schema()), "tool_call")
        for spec in TOOLS.values()
    )
    return AgentDef(
        CUSTOMER_SERVICE,
        "customer service",
        "conversation",
        SYSTEM_PROMPT,
        tools,
    )


def agent(agent_id: str) -> AgentDef:
    """The definition of ``agent_id`` (``dev-<module>`` is built on demand).

    Raises:
        NotFoundError: no such agent.
    """
    if agent_id in _FIXED:
        return _FIXED[agent_id]
    if agent_id.startswith(DEV_PREFIX) and len(agent_id) > len(DEV_PREFIX):
        return dev_agent(agent_id[len(DEV_PREFIX) :])
    if agent_id == CUSTOMER_SERVICE:
        return customer_service_agent()
    raise NotFoundError(f"unknown agent {agent_id!r}", agent=agent_id)


def role_of(agent_id: str) -> str:
    """The role label of ``agent_id``, or ``"agent"`` when it is unknown."""
    try:
        return agent(agent_id).role
    except NotFoundError:
        return "agent"
