"""Finding the IAM policies of a Terraform directory and the roles they attach to.

Supported shapes: ``aws_iam_role_policy`` and ``aws_iam_policy`` whose ``policy`` is
``jsonencode({...})``, ``data.aws_iam_policy_document.X.json``, a heredoc or
``file("x.json")``; ``inline_policy`` blocks of ``aws_iam_role``; attachments via
``aws_iam_role_policy_attachment`` and ``aws_iam_policy_attachment``. A role's tool
comes from its ``ferramenta`` tag, else its names, else the Lambda functions using it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from backend.posture.iam_model import IamFinding, PolicySource, Tool
from backend.posture.iam_sources import strip_json_comments
from backend.posture.iam_tools import tool_from_text
from backend.posture.terraform import Block, Renderer, TerraformConfig, parse_hcl

_JSONENCODE = re.compile(r"^\$\{\s*jsonencode\((.*)\)\s*\}$", re.DOTALL)
_DOC_REF = re.compile(r"^\$\{\s*data\.aws_iam_policy_document\.([\w-]+)\.json\s*\}$")
_FILE_REF = re.compile(r'^\$\{\s*file\(\s*"(?:\$\{path\.module\}/)?([^"]+)"\s*\)\s*\}$')
_ROLE_REF = re.compile(r"^\$\{\s*aws_iam_role\.([\w-]+)(?:\[[^\]]*\])?\.(?:id|name|arn)\s*\}$")
_POLICY_REF = re.compile(r"^\$\{\s*aws_iam_policy\.([\w-]+)(?:\[[^\]]*\])?\.(?:arn|id)\s*\}$")
_BROAD_MANAGED = ("administrator", "poweruser", "fullaccess", "readonlyaccess")


@dataclass
class TerraformIam:
    """What the audit needs from one directory.

    Attributes:
        policies: every permission policy, one entry per role it is attached to.
        roles: role display name -> the policies attached to it.
        findings: problems found while reading (unevaluable policies, managed policies).
    """

    policies: list[PolicySource] = field(default_factory=list)
    roles: dict[str, list[PolicySource]] = field(default_factory=dict)
    findings: list[IamFinding] = field(default_factory=list)


class _Extractor:
    def __init__(self, config: TerraformConfig) -> None:
        self.config = config
        self.renderer = Renderer(config)
        self.result = TerraformIam()

    # -- roles -------------------------------------------------------------------
    def role_display(self, block: Block) -> str:
        name = block.body.get("name")
        return str(self.renderer.render(name)) if isinstance(name, str) else block.address

    def role_tool(self, block: Block) -> Tool | None:
        tags = block.body.get("tags")
        if isinstance(tags, dict) and isinstance(tags.get("ferramenta"), str):
            tool = tool_from_text(str(self.renderer.render(tags["ferramenta"])))
            if tool:
                return tool
        tool = tool_from_text(self.role_display(block), block.name)
        if tool:
            return tool
        users = []
        for fn in self.config.of_type("aws_lambda_function"):
            role = fn.body.get("role")
            match = _ROLE_REF.match(role) if isinstance(role, str) else None
            if match and match.group(1) == block.name:
                users.append(str(self.renderer.render(fn.body.get("function_name", fn.name))))
        return tool_from_text(*users) if users else None

    def resolve_role(self, value: Any) -> tuple[str | None, Tool | None]:
        if not isinstance(value, str):
            return None, None
        match = _ROLE_REF.match(value)
        block = self.config.blocks.get(f"aws_iam_role.{match.group(1)}") if match else None
        if block is None:
            for candidate in self.config.of_type("aws_iam_role"):
                if self.role_display(candidate) == self.renderer.render(value):
                    block = candidate
        if block is None:
            name = str(self.renderer.render(value))
            return name, tool_from_text(name)
        return self.role_display(block), self.role_tool(block)

    # -- documents ---------------------------------------------------------------
    def document(self, value: Any, origin: Block) -> tuple[dict[str, Any] | None, str]:
        """Return the rendered document and a note on where it came from."""
        if not isinstance(value, str):
            return None, ""
        if match := _JSONENCODE.match(value):
            tree = parse_hcl(f"__doc = {match.group(1)}\n", origin.file)
            doc = tree.get("__doc")
            return (self.renderer.render(doc), "") if isinstance(doc, dict) else (None, "")
        if match := _DOC_REF.match(value):
            block = self.config.blocks.get(f"data.aws_iam_policy_document.{match.group(1)}")
            if block is None:
                return None, f"data.aws_iam_policy_document.{match.group(1)} is not defined"
            return self.policy_document(block), block.address
        if match := _FILE_REF.match(value):
            path = self.config.directory / match.group(1)
            try:
                text = path.read_text(encoding="utf-8")
            except OSError:
                return None, f"{path} cannot be read"
            value = text
        if "${" in value and value.lstrip().startswith("${"):
            return None, f"expression {value[:60]!r} cannot be evaluated statically"
        try:
            doc = json.loads(strip_json_comments(str(self.renderer.render(value))))
        except json.JSONDecodeError:
            return None, "policy text is not JSON"
        return (doc, "") if isinstance(doc, dict) else (None, "policy is not a JSON object")

    def policy_document(self, block: Block) -> dict[str, Any]:
        statements = []
        for raw in block.body.get("statement", []) or []:
            stmt: dict[str, Any] = {"Effect": raw.get("effect", "Allow")}
            for key, target in (
                ("sid", "Sid"),
                ("actions", "Action"),
                ("not_actions", "NotAction"),
                ("resources", "Resource"),
                ("not_resources", "NotResource"),
            ):
                if key in raw:
                    stmt[target] = raw[key]
            conditions: dict[str, dict[str, Any]] = {}
            for cond in raw.get("condition", []) or []:
                test = conditions.setdefault(str(cond.get("test")), {})
                test[str(cond.get("variable"))] = cond.get("values")
            if conditions:
                stmt["Condition"] = conditions
            statements.append(stmt)
        return dict(self.renderer.render({"Version": "2012-10-17", "Statement": statements}))

    # -- assembly ----------------------------------------------------------------
    def add(
        self, origin: Block, name: str, value: Any, roles: list[tuple[str | None, Tool | None]]
    ) -> None:
        before = len(self.renderer.unresolved)
        doc, note = self.document(value, origin)
        if doc is None:
            self.result.findings.append(
                IamFinding(
                    file=origin.file,
                    policy=name,
                    role=roles[0][0] if roles else None,
                    tool=roles[0][1] if roles else None,
                    statement="(policy)",
                    rule="policy_not_evaluated",
                    severity="error",
                    message=f"the policy could not be read statically ({note or 'unknown form'})"
                    "; an unaudited policy cannot be trusted",
                )
            )
            return
        label = f"{name} ({note})" if note else name
        unresolved = self.renderer.unresolved[before:]
        for role, tool in roles or [(None, None)]:
            source = PolicySource(origin.file, label, doc, role, tool, list(unresolved))
            self.result.policies.append(source)
            if role:
                self.result.roles.setdefault(role, []).append(source)

    def run(self) -> TerraformIam:
        for block in self.config.of_type("aws_iam_role_policy"):
            role = self.resolve_role(block.body.get("role"))
            self.add(block, block.address, block.body.get("policy"), [role])
        for block in self.config.of_type("aws_iam_role"):
            role = (self.role_display(block), self.role_tool(block))
            for inline in block.body.get("inline_policy", []) or []:
                name = f"{block.address} inline {self.renderer.render(inline.get('name', ''))}"
                self.add(block, name, inline.get("policy"), [role])
        attached = self.attachments()
        for block in self.config.of_type("aws_iam_policy"):
            self.add(block, block.address, block.body.get("policy"), attached.get(block.name, []))
        return self.result

    def attachments(self) -> dict[str, list[tuple[str | None, Tool | None]]]:
        out: dict[str, list[tuple[str | None, Tool | None]]] = {}
        links: list[tuple[Block, Any, list[Any]]] = [
            (b, b.body.get("policy_arn"), [b.body.get("role")])
            for b in self.config.of_type("aws_iam_role_policy_attachment")
        ]
        links += [
            (b, b.body.get("policy_arn"), list(b.body.get("roles") or []))
            for b in self.config.of_type("aws_iam_policy_attachment")
        ]
        for block, policy_arn, roles in links:
            match = _POLICY_REF.match(policy_arn) if isinstance(policy_arn, str) else None
            resolved = [self.resolve_role(r) for r in roles]
            if match:
                out.setdefault(match.group(1), []).extend(resolved)
            elif isinstance(policy_arn, str) and ":aws:policy/" in policy_arn:
                self.managed(block, policy_arn, resolved)
        return out

    def managed(self, block: Block, arn: str, roles: list[tuple[str | None, Tool | None]]) -> None:
        broad = any(word in arn.lower() for word in _BROAD_MANAGED)
        for role, tool in roles:
            self.result.findings.append(
                IamFinding(
                    file=block.file,
                    policy=block.address,
                    role=role,
                    tool=tool,
                    statement="(attachment)",
                    rule="managed_policy",
                    severity="error" if broad else "warning",
                    message=f"AWS managed policy {arn} is attached; its contents are not "
                    "audited here and are not tailored to the tool"
                    + ("; it grants far more than any tool uses" if broad else ""),
                )
            )


def extract_iam(config: TerraformConfig) -> TerraformIam:
    """Collect every permission policy of ``config`` with the role it attaches to."""
    return _Extractor(config).run()
