"""IAM policies inside JSON and YAML files: bare documents, CLI output, CloudFormation.

One reader for ``cadencia audit iam`` and the gate, so a policy is found the same way
by both: a byte-order mark (UTF-8 or UTF-16) is not a reason to skip a file, and a
policy nested in a CloudFormation template (``AWS::IAM::Policy``/``ManagedPolicy``
``PolicyDocument``, the ``Policies`` of a role, user or group, ``ManagedPolicyArns``)
is a policy like any other. CloudFormation intrinsics (``Ref``, ``Fn::Sub``,
``!GetAtt``...) are rendered as ``${...}`` and listed as unresolved, like Terraform
references.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from backend.exceptions import PathError, ValidationError
from backend.posture.iam_model import IamFinding, PolicySource, Tool
from backend.posture.iam_sources import strip_json_comments
from backend.posture.iam_tools import tool_from_text

ADMIN_MANAGED = ("administratoraccess", "poweruseraccess", "iamfullaccess")
# Broad AWS managed policies: any "*FullAccess" or the admin ones.
BROAD_MANAGED = ("administrator", "poweruser", "fullaccess", "readonlyaccess")
_PSEUDO = {
    "AWS::AccountId": "111122223333",
    "AWS::Region": "us-east-1",
    "AWS::Partition": "aws",
    "AWS::URLSuffix": "amazonaws.com",
}
_SUB = re.compile(r"\$\{([^}!]+)\}")
_POLICY_TYPES = ("AWS::IAM::Policy", "AWS::IAM::ManagedPolicy")
_PRINCIPAL_TYPES = ("AWS::IAM::Role", "AWS::IAM::User", "AWS::IAM::Group")
POLICY_SUFFIXES = (".json", ".yaml", ".yml", ".template", ".cfn")


def decode(raw: bytes, origin: str) -> str:
    """Text of a policy file whatever its Unicode encoding (BOMs included).

    Raises:
        PathError: the bytes are not text in any Unicode encoding (a binary file).
    """
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        encodings: tuple[str, ...] = ("utf-16",)
    elif raw.startswith(b"\xef\xbb\xbf"):
        encodings = ("utf-8-sig",)
    else:
        encodings = ("utf-8",)
    for encoding in encodings:
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        if "\x00" not in text:
            return text
    raise PathError(f"{origin}: not a text file (binary or unknown encoding)", path=origin)


def read_text(path: Path) -> str:
    """Read and :func:`decode` one file.

    Raises:
        PathError: the file cannot be read or is not text.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PathError(f"cannot read {path}: {exc}", path=str(path)) from exc
    return decode(raw, str(path))


class _CfnLoader(yaml.SafeLoader):
    """YAML with CloudFormation's short tags (``!Ref x`` == ``{"Ref": "x"}``)."""


def _cfn_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    name = "Ref" if suffix == "Ref" else f"Fn::{suffix}"
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_scalar(node)
        if suffix == "GetAtt" and isinstance(value, str):
            value = value.split(".", 1)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)  # type: ignore[arg-type]
    return {name: value}


_CfnLoader.add_multi_constructor("!", _cfn_tag)


def parse_text(text: str, origin: str) -> Any:
    """JSON (comments allowed) or YAML, by content.

    Raises:
        ValidationError: neither parses.
    """
    try:
        return json.loads(strip_json_comments(text))
    except json.JSONDecodeError as exc:
        json_error = exc
    if origin.endswith(".json"):
        raise ValidationError(
            f"{origin}: not valid JSON (line {json_error.lineno}: {json_error.msg})", path=origin
        )
    try:
        return yaml.load(text, Loader=_CfnLoader)
    except yaml.YAMLError as exc:
        raise ValidationError(f"{origin}: not valid JSON or YAML ({exc})", path=origin) from exc


class _Intrinsics:
    """Render CloudFormation intrinsics into strings, collecting what stays unknown."""

    def __init__(self) -> None:
        self.unresolved: list[str] = []

    def render(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.render(v) for v in value]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Ref":
                return _PSEUDO.get(str(arg)) or self._unknown(f"${{{arg}}}")
            if key == "Fn::GetAtt":
                parts = arg if isinstance(arg, list) else str(arg).split(".", 1)
                return self._unknown("${" + ".".join(map(str, parts)) + "}")
            if key == "Fn::Sub":
                template = arg[0] if isinstance(arg, list) and arg else arg
                return self._sub(str(template))
            if key == "Fn::Join" and isinstance(arg, list) and len(arg) == 2:
                parts = self.render(arg[1])
                if isinstance(parts, list):
                    return str(arg[0]).join(str(p) for p in parts)
            if key.startswith("Fn::") or key == "Condition":
                return self._unknown("${" + key + "}")
        return {k: self.render(v) for k, v in value.items()}

    def _sub(self, template: str) -> str:
        def replace(match: re.Match[str]) -> str:
            name = match.group(1).strip()
            return _PSEUDO.get(name) or self._unknown(match.group(0))

        return _SUB.sub(replace, template)

    def _unknown(self, text: str) -> str:
        if text not in self.unresolved:
            self.unresolved.append(text)
        return text


def managed_finding(file: str, where: str, arn: str, principal: str | None) -> IamFinding:
    """An AWS managed policy attached: an error when it is one of the broad ones."""
    broad = any(word in arn.lower() for word in BROAD_MANAGED)
    return IamFinding(
        file=file,
        policy=where,
        role=principal,
        tool=tool_from_text(principal),
        statement="(attachment)",
        rule="managed_policy",
        severity="error" if broad else "warning",
        message=f"AWS managed policy {arn} is attached; its contents are not audited here "
        "and are not tailored to the tool"
        + ("; it grants far more than any tool uses" if broad else ""),
    )


def policies_in(
    data: Any, file: str, tool: Tool | None = None
) -> tuple[list[PolicySource], list[IamFinding]]:
    """Every policy in one parsed JSON/YAML file, plus attachment findings.

    Accepts a bare policy document, ``aws iam get-role-policy`` output (``RoleName`` +
    ``PolicyDocument``) and CloudFormation templates. Returns nothing for other data.
    """
    if not isinstance(data, dict):
        return [], []
    if "Statement" in data:
        return [
            PolicySource(file, Path(file).name, data, None, tool or tool_from_text(Path(file).stem))
        ], []
    if "PolicyDocument" in data:
        role = data.get("RoleName") if isinstance(data.get("RoleName"), str) else None
        document = data["PolicyDocument"]
        if isinstance(document, str):  # some CLIs return the document as a JSON string
            try:
                document = json.loads(document)
            except json.JSONDecodeError as exc:
                raise ValidationError(f"{file}: PolicyDocument is not JSON", path=file) from exc
        if isinstance(document, dict):
            name = str(data.get("PolicyName") or Path(file).name)
            return [
                PolicySource(
                    file, name, document, role, tool or tool_from_text(role, Path(file).stem)
                )
            ], []
        return [], []
    resources = data.get("Resources")
    if isinstance(resources, dict):
        return _cloudformation(resources, file, tool)
    return [], []


def _cloudformation(
    resources: dict[str, Any], file: str, tool: Tool | None
) -> tuple[list[PolicySource], list[IamFinding]]:
    sources: list[PolicySource] = []
    findings: list[IamFinding] = []
    for logical, resource in resources.items():
        if not isinstance(resource, dict):
            continue
        kind = resource.get("Type")
        props = resource.get("Properties")
        if kind not in _POLICY_TYPES + _PRINCIPAL_TYPES or not isinstance(props, dict):
            continue
        principal = str(
            props.get("RoleName") or props.get("UserName") or props.get("GroupName") or logical
        )
        documents: list[tuple[str, Any]] = []
        if kind in _POLICY_TYPES:
            documents.append((f"{kind} {logical}", props.get("PolicyDocument")))
        for index, inline in enumerate(props.get("Policies") or []):
            if isinstance(inline, dict):
                label = inline.get("PolicyName") or f"#{index + 1}"
                documents.append((f"{kind} {logical} policy {label}", inline.get("PolicyDocument")))
        for name, raw in documents:
            intrinsics = _Intrinsics()
            document = intrinsics.render(raw)
            if isinstance(document, str):
                try:
                    document = json.loads(document)
                except json.JSONDecodeError:
                    document = None
            if not isinstance(document, dict):
                findings.append(_unevaluated(file, name, "its PolicyDocument is not an object"))
                continue
            role = principal if kind in _PRINCIPAL_TYPES else None
            sources.append(
                PolicySource(
                    file,
                    name,
                    document,
                    role,
                    tool or tool_from_text(role, logical),
                    intrinsics.unresolved,
                )
            )
        for arn in props.get("ManagedPolicyArns") or []:
            rendered = _Intrinsics().render(arn)
            if isinstance(rendered, str) and ":aws:policy/" in rendered:
                findings.append(managed_finding(file, f"{kind} {logical}", rendered, principal))
    return sources, findings


def _unevaluated(file: str, name: str, why: str) -> IamFinding:
    return IamFinding(
        file=file,
        policy=name,
        role=None,
        tool=None,
        statement="(policy)",
        rule="policy_not_evaluated",
        severity="error",
        message=f"the policy could not be read statically ({why}); an unaudited policy "
        "cannot be trusted",
    )


def load_file(path: Path, tool: Tool | None = None) -> tuple[list[PolicySource], list[IamFinding]]:
    """Read one JSON/YAML file into its policies (an empty list: no policy in it).

    Raises:
        PathError: the file cannot be read or is binary.
        ValidationError: the file does not parse, or a policy in it is malformed.
    """
    text = read_text(path)
    if not text.strip():
        return [], []
    sources, findings = policies_in(parse_text(text, str(path)), str(path), tool)
    for source in sources:
        source.statements()  # a malformed policy is exit 2, not a crash mid-audit
    return sources, findings
