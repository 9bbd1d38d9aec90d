"""Normalized IAM policies and audit findings.

Every source (a policy JSON file, a Terraform ``jsonencode`` block, a
``data "aws_iam_policy_document"``) is reduced to a :class:`PolicySource` holding a
plain IAM JSON document, so the rules never care where a policy came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel

from backend.exceptions import ValidationError
from backend.tools.names import ToolName

Severity = Literal["error", "warning"]
Tool = ToolName


class IamFinding(BaseModel):
    """One problem found in one statement (or one role, for role-wide rules)."""

    file: str
    policy: str
    role: str | None
    tool: str | None
    statement: str
    rule: str
    severity: Severity
    message: str
    source: Literal["cadencia", "parliament"] = "cadencia"


@dataclass(frozen=True)
class Statement:
    """One statement with ``Action``/``Resource`` always as tuples.

    Attributes:
        index: position in the policy (0-based), used when there is no Sid.
        sid: the statement's ``Sid``, if any.
        effect: ``Allow`` or ``Deny``.
        actions: the ``Action`` entries (empty when the statement uses ``NotAction``).
        not_actions: the ``NotAction`` entries.
        resources: the ``Resource`` entries.
        not_resources: the ``NotResource`` entries.
        has_condition: whether a ``Condition`` narrows the statement.
        condition: the ``Condition`` element as written (empty when absent).
    """

    index: int
    sid: str | None
    effect: str
    actions: tuple[str, ...]
    not_actions: tuple[str, ...]
    resources: tuple[str, ...]
    not_resources: tuple[str, ...]
    has_condition: bool
    condition: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def label(self) -> str:
        """``Sid "X"`` when the statement has one, else ``statement #N`` (1-based)."""
        return f'Sid "{self.sid}"' if self.sid else f"statement #{self.index + 1}"


@dataclass
class PolicySource:
    """A policy document plus where it came from and which role it is attached to.

    Attributes:
        file: the file the policy was read from.
        name: the policy's name or Terraform address.
        document: the IAM JSON document (Terraform references already rendered).
        role: the role the policy is attached to, if known.
        tool: the agent tool that role serves; ``None`` means unknown, which the rules
            treat as a role shared by all three tools (the seed's situation).
        unresolved: Terraform expressions that could not be rendered.
    """

    file: str
    name: str
    document: dict[str, Any]
    role: str | None = None
    tool: Tool | None = None
    unresolved: list[str] = field(default_factory=list)

    def statements(self) -> list[Statement]:
        """Return the document's statements, normalized.

        Raises:
            ValidationError: the document has no usable ``Statement``.
        """
        raw = self.document.get("Statement")
        if isinstance(raw, dict):
            raw = [raw]
        if not isinstance(raw, list):
            raise ValidationError(
                f"{self.file}: policy {self.name} has no Statement list", file=self.file
            )
        out: list[Statement] = []
        for index, item in enumerate(raw):
            if not isinstance(item, dict):
                raise ValidationError(
                    f"{self.file}: statement #{index + 1} of {self.name} is not an object",
                    file=self.file,
                )
            out.append(
                Statement(
                    index=index,
                    sid=item.get("Sid") or None,
                    effect=str(item.get("Effect", "")),
                    actions=as_tuple(item.get("Action")),
                    not_actions=as_tuple(item.get("NotAction")),
                    resources=as_tuple(item.get("Resource")),
                    not_resources=as_tuple(item.get("NotResource")),
                    has_condition=bool(item.get("Condition")),
                    condition=cond if isinstance(cond := item.get("Condition"), dict) else {},
                )
            )
        return out


def as_tuple(value: object) -> tuple[str, ...]:
    """IAM allows a single string or a list wherever a list is expected."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return (str(value),)
