"""``decide(agent, action)``: may this agent take this action — allow, ask, or deny?

Three stages, in order, Cedar-style: **iam** (what the agent's identity is granted at
all), **agent_autonomy** (per ``(agent, action)``, e.g. seeded by the Arquiteto→Infra
handoff: :func:`infra_handoff_autonomy`) and **permissions** (the operator's
``permissions.json``, :func:`parse_permissions`). Each stage can only raise the outcome and
a deny short-circuits (:func:`decide` has the rules). ``ask`` means "create a pending
approval"; the caller does that.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic import ValidationError as PydanticValidationError

from backend.exceptions import ValidationError

Outcome = Literal["allow", "ask", "deny"]
Stage = Literal["iam", "agent_autonomy", "permissions", "default"]
ActionType = Literal[
    "open_infra_pr",
    "open_adr_pr",
    "terminal",
    "propose_task_pr",
    "merge_pr",
    "tool_call",
]
Autonomy = Literal["auto_approve", "ask", "pending", "deny"]

ACTION_TYPES: tuple[str, ...] = get_args(ActionType)
AUTONOMY_VALUES: tuple[str, ...] = get_args(Autonomy)

DEFAULTS: dict[str, Outcome] = {
    # Proposals a maintainer signs off (the seed's ADR 0014 §3): pending until approved.
    "open_infra_pr": "ask",
    "open_adr_pr": "ask",
    # A generic shell is never on by default; the Infra agent lints through a direct tool.
    "terminal": "deny",
    # A dev PR already goes through QA, SecOps and a human at awaiting_human.
    "propose_task_pr": "allow",
    # Only an operator merges.
    "merge_pr": "deny",
    # Ordinary registry tools; customer-service tools are guarded by the orchestrator.
    "tool_call": "allow",
}

_RANK: dict[str, int] = {"deny": 0, "ask": 1, "allow": 2}
_AUTONOMY_OUTCOME: dict[str, Outcome] = {
    "auto_approve": "allow",
    "ask": "ask",
    "pending": "ask",
    "deny": "deny",
}

Table = Mapping[tuple[str, str], str]


@dataclass(frozen=True)
class Decision:
    """What :func:`decide` concluded, which stage decided it, and the rule that did."""

    outcome: Outcome
    stage: Stage
    rule: str

    @property
    def needs_approval(self) -> bool:
        """Whether the caller must create a pending approval before acting."""
        return self.outcome == "ask"

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form (event payloads, API)."""
        return {"outcome": self.outcome, "stage": self.stage, "rule": self.rule}


class PermissionRule(BaseModel):
    """One rule of ``permissions.json``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    agent: str = Field(default="*", min_length=1)
    action: str = "*"
    outcome: Outcome
    reason: str | None = None

    @field_validator("action")
    @classmethod
    def _known_action(cls, value: str) -> str:
        if value != "*" and value not in ACTION_TYPES:
            raise ValueError(f"unknown action {value!r}; expected one of {ACTION_TYPES} or '*'")
        return value


class PermissionsFile(BaseModel):
    """The whole ``permissions.json``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    version: Literal[1] = 1
    rules: list[PermissionRule] = Field(default_factory=list)


def infra_handoff_autonomy() -> dict[tuple[str, str], Autonomy]:
    """The autonomy seeded when a handoff to ``infra`` is accepted (seed ADR 0014 §1).

    Proposing the infra PR is safe to auto-approve (the agent never applies anything);
    the generic terminal is denied as defence in depth (its registry has none anyway).
    """
    return {("infra", "open_infra_pr"): "auto_approve", ("infra", "terminal"): "deny"}


def parse_permissions(data: Any) -> PermissionsFile:
    """Validate ``permissions.json`` content (JSON text, bytes, or parsed data).

    The file::

        {
          "version": 1,
          "rules": [
            {"agent": "dev-*", "action": "terminal", "outcome": "allow", "reason": "tests"},
            {"agent": "*", "action": "open_adr_pr", "outcome": "allow"}
          ]
        }

    ``agent`` and ``action`` default to ``"*"``; ``action`` must be one of :data:`ACTION_TYPES`
    or ``"*"``; ``outcome`` is ``allow | ask | deny``; unknown keys are rejected. A missing
    file means "no rules"; one that is unreadable, not JSON, or does not fit makes every
    decision reaching the permissions stage a ``deny`` (fail closed), the reason in
    ``Decision.rule``.

    Raises:
        ValidationError: the content is not JSON or does not fit the schema.
    """
    if isinstance(data, PermissionsFile):
        return data
    if isinstance(data, bytes | str):
        try:
            data = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValidationError(f"permissions.json is not valid JSON: {exc}") from exc
    try:
        return PermissionsFile.model_validate(data)
    except PydanticValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(root)"
        raise ValidationError(f"permissions.json {where}: {first['msg']}") from exc


def decide(
    agent: str,
    action: str,
    *,
    iam: Table | None = None,
    autonomy: Table | None = None,
    permissions: Any = None,
) -> Decision:
    """Decide whether ``agent`` may take ``action``.

    Args:
        agent: the agent id (``infra``, ``dev-api``...).
        action: one of :data:`ACTION_TYPES`; anything else is denied.
        iam: ``{(agent, action): outcome}`` granted to identities; ``None`` = no opinion.
        autonomy: ``{(agent, action): auto_approve|ask|pending|deny}``; ``None`` = none.
        permissions: ``permissions.json`` as a :class:`PermissionsFile`, parsed mapping,
            ``Path`` (read only if reached), or a zero-argument loader returning any of
            those or JSON text (called only if reached).

    Returns:
        The :class:`Decision`; never raises for bad input — bad policy data denies.

    The outcome starts at the action's default (:data:`DEFAULTS`) and each stage (iam, then
    agent_autonomy, then ``permissions.json``) can only *raise* it (``deny < ask < allow``). A
    ``deny`` at any stage short-circuits: later stages are never consulted, so no broad allow
    in ``permissions.json`` undoes a deny from IAM or autonomy. The iam and autonomy tables map
    ``{(agent, action): value}``; either part may be ``"*"`` or a prefix such as ``"dev-*"``;
    among several matching entries a deny wins, otherwise the most permissive.
    """
    if action not in DEFAULTS:
        return Decision("deny", "default", f"unknown action {action!r}")
    outcome: Outcome = DEFAULTS[action]
    stage: Stage = "default"
    rule = f"default: {action} -> {outcome}"
    stages: list[tuple[Stage, Callable[[], tuple[Outcome, str] | None]]] = [
        ("iam", lambda: _iam_stage(agent, action, iam)),
        ("agent_autonomy", lambda: _autonomy_stage(agent, action, autonomy)),
        ("permissions", lambda: _permissions_stage(agent, action, permissions)),
    ]
    for name, evaluate in stages:
        verdict = evaluate()
        if verdict is None:
            continue
        value, why = verdict
        if value == "deny":
            return Decision("deny", name, why)
        if _RANK[value] > _RANK[outcome] or (_RANK[value] == _RANK[outcome] and stage == "default"):
            outcome, stage, rule = value, name, why
    return Decision(outcome, stage, rule)


def pattern_matches(pattern: str, value: str) -> bool:
    """Whether ``value`` fits ``pattern`` (exact, ``*``, or a ``prefix*`` like ``dev-*``)."""
    if pattern == "*" or pattern == value:
        return True
    return pattern.endswith("*") and value.startswith(pattern[:-1])


def _pick(candidates: list[tuple[Outcome, str]]) -> tuple[Outcome, str] | None:
    """Deny wins; otherwise the most permissive, first listed on a tie."""
    if not candidates:
        return None
    for candidate in candidates:
        if candidate[0] == "deny":
            return candidate
    return max(candidates, key=lambda c: _RANK[c[0]])


def _iam_stage(agent: str, action: str, table: Table | None) -> tuple[Outcome, str] | None:
    candidates: list[tuple[Outcome, str]] = []
    for (who, what), value in (table or {}).items():
        if pattern_matches(who, agent) and pattern_matches(what, action):
            if value not in _RANK:
                return "deny", f"iam ({who}, {what}) has invalid outcome {value!r}"
            candidates.append((value, f"iam ({who}, {what}) = {value}"))  # type: ignore[arg-type]
    return _pick(candidates)


def _autonomy_stage(agent: str, action: str, table: Table | None) -> tuple[Outcome, str] | None:
    candidates: list[tuple[Outcome, str]] = []
    for (who, what), value in (table or {}).items():
        if pattern_matches(who, agent) and pattern_matches(what, action):
            if value not in _AUTONOMY_OUTCOME:
                return "deny", f"agent_autonomy ({who}, {what}) has invalid value {value!r}"
            candidates.append(
                (_AUTONOMY_OUTCOME[value], f"agent_autonomy ({who}, {what}) = {value}")
            )
    return _pick(candidates)


def _permissions_stage(agent: str, action: str, source: Any) -> tuple[Outcome, str] | None:
    try:
        parsed = _load_permissions(source)
    except Exception as exc:
        return "deny", f"malformed permissions.json, failing closed: {exc}"
    if parsed is None:
        return None
    candidates: list[tuple[Outcome, str]] = []
    for index, item in enumerate(parsed.rules):
        if pattern_matches(item.agent, agent) and pattern_matches(item.action, action):
            why = f"permissions.json rules[{index}]: ({item.agent}, {item.action}) = {item.outcome}"
            if item.reason:
                why += f" ({item.reason})"
            candidates.append((item.outcome, why))
    return _pick(candidates)


def _load_permissions(source: Any) -> PermissionsFile | None:
    if source is None:
        return None
    if isinstance(source, Path):
        if not source.exists():
            return None
        return parse_permissions(source.read_bytes())
    if callable(source) and not isinstance(source, PermissionsFile):
        loaded = source()
        return None if loaded is None else parse_permissions(loaded)
    return parse_permissions(source)
