"""Finding the IAM policies of a Terraform directory and the roles they attach to.

Role, user and group policies (``jsonencode``, policy documents, heredocs, files), inline
and managed policies of roles, attachments and module inputs are read;
``for_each``/``count`` over a static collection is evaluated element by element, anything
else is reported as not evaluated (an error: what cannot be read cannot pass).
:func:`extract_iam` lists the shapes and how a role's tool is found.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from backend.posture.iam_documents import managed_finding
from backend.posture.iam_model import IamFinding, PolicySource, Tool
from backend.posture.iam_sources import strip_json_comments
from backend.posture.iam_tools import tool_from_text
from backend.posture.terraform import Block, Renderer, TerraformConfig, parse_hcl

_JSONENCODE = re.compile(r"^\$\{\s*jsonencode\((.*)\)\s*\}$", re.DOTALL)
_DOC_REF = re.compile(r"^\$\{\s*data\.aws_iam_policy_document\.([\w-]+)\.json\s*\}$")
_FILE_REF = re.compile(r'^\$\{\s*file\(\s*"(?:\$\{path\.module\}/)?([^"]+)"\s*\)\s*\}$')
_ROLE_REF = re.compile(r"^\$\{\s*aws_iam_role\.([\w-]+)(?:\[[^\]]*\])?\.(?:id|name|arn)\s*\}$")
_POLICY_REF = re.compile(r"^\$\{\s*aws_iam_policy\.([\w-]+)(?:\[[^\]]*\])?\.(?:arn|id)\s*\}$")
_VAR_ONLY = re.compile(r"^\$\{\s*var\.[\w-]+\s*\}$")
_DATA_POLICY_REF = re.compile(r"^\$\{\s*data\.aws_iam_policy\.([\w-]+)\.(?:arn|id)\s*\}$")
# (resource type, attribute naming the principal, principal kind)
_INLINE = (
    ("aws_iam_role_policy", "role", "role"),
    ("aws_iam_user_policy", "user", "user"),
    ("aws_iam_group_policy", "group", "group"),
)
_ATTACH = (
    ("aws_iam_role_policy_attachment", "role", "role"),
    ("aws_iam_user_policy_attachment", "user", "user"),
    ("aws_iam_group_policy_attachment", "group", "group"),
    ("aws_iam_policy_attachment", "roles", "role"),
    ("aws_iam_policy_attachment", "users", "user"),
    ("aws_iam_policy_attachment", "groups", "group"),
)


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
            rendered = self.policy_document(block)
            if rendered is None:
                return (
                    None,
                    f"a dynamic statement of {block.address} iterates over a value "
                    "that cannot be evaluated statically",
                )
            return rendered, block.address
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

    def policy_document(self, block: Block) -> dict[str, Any] | None:
        """A ``data "aws_iam_policy_document"``; ``None``: a dynamic block is not static."""
        statements = [self.statement(raw) for raw in block.body.get("statement", []) or []]
        for dynamic in block.body.get("dynamic", []) or []:
            spec = dynamic.get("statement") if isinstance(dynamic, dict) else None
            if not isinstance(spec, dict):
                continue
            iterator = str(spec.get("iterator") or "statement")
            pairs = self.renderer.collection(spec.get("for_each"))
            if pairs is None:
                return None
            for key, value in pairs:
                self.renderer.scope = {f"{iterator}.key": key, f"{iterator}.value": value}
                try:
                    statements += [self.statement(c) for c in spec.get("content", []) or []]
                finally:
                    self.renderer.scope = {}
        return {"Version": "2012-10-17", "Statement": statements}

    def statement(self, raw: dict[str, Any]) -> dict[str, Any]:
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
        return dict(_iam_variables(self.renderer.render(stmt)))

    # -- assembly ----------------------------------------------------------------
    def not_evaluated(
        self, origin: Block, name: str, why: str, roles: list[tuple[str | None, Tool | None]]
    ) -> None:
        role, tool = roles[0] if roles else (None, None)
        self.result.findings.append(
            IamFinding(
                file=origin.file,
                policy=name,
                role=role,
                tool=tool,
                statement="(policy)",
                rule="policy_not_evaluated",
                severity="error",
                message=f"the policy could not be read statically ({why}); an unaudited "
                "policy cannot be trusted",
            )
        )

    def add(
        self, origin: Block, name: str, value: Any, roles: list[tuple[str | None, Tool | None]]
    ) -> None:
        before = len(self.renderer.unresolved)
        doc, note = self.document(value, origin)
        if doc is None:
            self.not_evaluated(origin, name, note or "unknown form", roles)
            if isinstance(value, str) and _VAR_ONLY.match(value):
                # Inside a module: the caller supplies the document, and the caller's
                # module input is where it is read and judged.
                self.result.findings[-1].severity = "warning"
                self.result.findings[-1].message += " (a module input: judged at the call)"
            return
        label = f"{name} ({note})" if note else name
        unresolved = self.renderer.unresolved[before:]
        for role, tool in roles or [(None, None)]:
            source = PolicySource(origin.file, label, doc, role, tool, list(unresolved))
            self.result.policies.append(source)
            if role:
                self.result.roles.setdefault(role, []).append(source)

    def each(self, block: Block) -> list[tuple[str, dict[str, str]]] | None:
        """``(address suffix, scope)`` per instance of ``block``; ``None``: not static."""
        if "for_each" in block.body:
            pairs = self.renderer.collection(block.body["for_each"])
            if pairs is None:
                return None
            return [(f'["{k}"]', {"each.key": k, "each.value": v}) for k, v in pairs]
        if "count" in block.body:
            pairs = self.renderer.collection(block.body["count"])
            if pairs is None:
                return None
            return [(f"[{k}]", {"count.index": k}) for k, _ in pairs]
        return [("", {})]

    def instances(self, block: Block) -> Iterator[str]:
        """Each instance's address, with the renderer's scope set while it is used."""
        instances = self.each(block)
        if instances is None:
            what = "for_each" if "for_each" in block.body else "count"
            expression = str(block.body[what])[:60]
            self.not_evaluated(block, block.address, f"{what} = {expression} is not static", [])
            return
        for suffix, scope in instances:
            self.renderer.scope = scope
            try:
                yield f"{block.address}{suffix}"
            finally:
                self.renderer.scope = {}

    def principal(self, kind: str, value: Any) -> tuple[str | None, Tool | None]:
        if kind == "role":
            return self.resolve_role(value)
        if not isinstance(value, str):
            return None, None
        name = str(self.renderer.render(value))
        block_ref = re.match(rf"^\$\{{\s*aws_iam_{kind}\.([\w-]+)\.(?:name|id)\s*\}}$", value)
        block = (
            self.config.blocks.get(f"aws_iam_{kind}.{block_ref.group(1)}") if block_ref else None
        )
        if block is not None and isinstance(block.body.get("name"), str):
            name = str(self.renderer.render(block.body["name"]))
        return f"{kind} {name}", tool_from_text(name)

    def run(self) -> TerraformIam:
        for type_, attr, kind in _INLINE:
            for block in self.config.of_type(type_):
                for address in self.instances(block):
                    principal = self.principal(kind, block.body.get(attr))
                    self.add(block, address, block.body.get("policy"), [principal])
        for block in self.config.of_type("aws_iam_role"):
            role = (self.role_display(block), self.role_tool(block))
            for inline in block.body.get("inline_policy", []) or []:
                name = f"{block.address} inline {self.renderer.render(inline.get('name', ''))}"
                self.add(block, name, inline.get("policy"), [role])
        attached = self.attachments()
        for block in self.config.of_type("aws_iam_policy"):
            for address in self.instances(block):
                self.add(block, address, block.body.get("policy"), attached.get(block.name, []))
        self.modules()
        return self.result

    def attachments(self) -> dict[str, list[tuple[str | None, Tool | None]]]:
        out: dict[str, list[tuple[str | None, Tool | None]]] = {}
        links: list[tuple[Block, Any, list[tuple[str | None, Tool | None]]]] = []
        for type_, attr, kind in _ATTACH:
            for b in self.config.of_type(type_):
                targets = b.body.get(attr)
                targets = targets if isinstance(targets, list) else [targets] if targets else []
                links.append(
                    (b, b.body.get("policy_arn"), [self.principal(kind, t) for t in targets])
                )
        for b in self.config.of_type("aws_iam_role"):
            arns = b.body.get("managed_policy_arns")
            role = (self.role_display(b), self.role_tool(b))
            for arn in arns if isinstance(arns, list) else []:
                links.append((b, arn, [role]))
        for block, policy_arn, principals in links:
            match = _POLICY_REF.match(policy_arn) if isinstance(policy_arn, str) else None
            if match:
                out.setdefault(match.group(1), []).extend(principals)
                continue
            arn = self.managed_arn(policy_arn)
            if arn is not None:
                for principal, _tool in principals or [(None, None)]:
                    self.result.findings.append(
                        managed_finding(block.file, block.address, arn, principal)
                    )
        return out

    def managed_arn(self, value: Any) -> str | None:
        """The AWS managed policy ARN ``value`` names (literal, var, ``data.aws_iam_policy``)."""
        if not isinstance(value, str):
            return None
        match = _DATA_POLICY_REF.match(value)
        if match:
            block = self.config.blocks.get(f"data.aws_iam_policy.{match.group(1)}")
            body = block.body if block else {}
            if isinstance(body.get("arn"), str):
                value = body["arn"]
            elif isinstance(body.get("name"), str):
                value = f"arn:aws:iam::aws:policy/{self.renderer.render(body['name'])}"
        rendered = str(self.renderer.render(value))
        return rendered if ":aws:policy/" in rendered else None

    def modules(self) -> None:
        """Module inputs: policy documents and AWS managed policy ARNs, wherever nested."""
        for name, body in sorted(self.config.modules.items()):
            origin = Block("module", "module", name, body, self.module_file(name))
            for key, value in body.items():
                self.module_value(origin, f"module.{name}.{key}", value)

    def module_value(self, origin: Block, where: str, value: Any) -> None:
        if isinstance(value, list):
            for index, item in enumerate(value):
                self.module_value(origin, f"{where}[{index}]", item)
        elif isinstance(value, dict):
            for key, item in value.items():
                self.module_value(origin, f"{where}.{key}", item)
        elif isinstance(value, str):
            arn = self.managed_arn(value)
            if arn is not None:
                self.result.findings.append(managed_finding(origin.file, where, arn, None))
            elif "Statement" in value or _DOC_REF.match(value):
                self.add(origin, where, value, [])

    def module_file(self, name: str) -> str:
        for path in sorted(self.config.directory.glob("*.tf")):
            try:
                if re.search(
                    rf'module\s+"{re.escape(name)}"',
                    path.read_text(encoding="utf-8", errors="replace"),
                ):
                    return str(path)
            except OSError:
                continue
        return str(self.config.directory)


def extract_iam(config: TerraformConfig) -> TerraformIam:
    """Collect every permission policy of ``config`` with the role it attaches to.

    Supported shapes: ``aws_iam_role_policy``, ``aws_iam_user_policy``,
    ``aws_iam_group_policy`` and ``aws_iam_policy`` whose ``policy`` is ``jsonencode({...})``,
    ``data.aws_iam_policy_document.X.json`` (``dynamic "statement"`` included), a heredoc or
    ``file("x.json")``; ``inline_policy`` blocks and ``managed_policy_arns`` of
    ``aws_iam_role``; attachments to roles, users and groups; policy documents and AWS
    managed policy ARNs passed as module inputs. ``for_each``/``count`` over a static
    collection is evaluated element by element; over anything else the policy is reported
    as not evaluated (an error: what cannot be read cannot pass). A role's tool comes from
    its ``ferramenta`` tag, else its names, else the Lambda functions using it.
    """
    return _Extractor(config).run()


def _iam_variables(value: Any) -> Any:
    """``&{aws:username}`` as the policy document data source writes it: ``${aws:username}``.

    ``aws_iam_policy_document`` takes ``&{...}`` for the IAM policy variables that
    Terraform's own ``${...}`` would otherwise interpolate, and renders them as ``${...}``.
    """
    if isinstance(value, str):
        return value.replace("&{", "${")
    if isinstance(value, list):
        return [_iam_variables(v) for v in value]
    if isinstance(value, dict):
        return {k: _iam_variables(v) for k, v in value.items()}
    return value
