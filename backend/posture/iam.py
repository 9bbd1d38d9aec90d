"""The IAM least-privilege audit behind ``cadencia audit iam``.

``audit_iam(paths)`` reads policy JSON files and Terraform directories, then runs
the project's rules (:mod:`backend.posture.iam_rules`) and parliament
(:mod:`backend.posture.iam_parliament`) on every policy. A least-privilege
violation is an ``error`` finding; anything that fails the audit is an error.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from backend.exceptions import PathError
from backend.posture.iam_model import IamFinding, PolicySource, Tool
from backend.posture.iam_parliament import parliament_findings
from backend.posture.iam_rules import check_role, check_statement
from backend.posture.iam_sources import load_policy_file
from backend.posture.terraform import load_directory
from backend.posture.terraform_iam import extract_iam


class AuditedPolicy(BaseModel):
    """One policy the audit read, for the report's inventory."""

    file: str
    policy: str
    role: str | None
    tool: str | None
    statements: int
    unresolved: list[str]


class IamReport(BaseModel):
    """The audit's result; ``--json`` prints exactly this model."""

    verdict: Literal["pass", "fail"]
    paths: list[str]
    policies: list[AuditedPolicy]
    findings: list[IamFinding]

    @property
    def errors(self) -> list[IamFinding]:
        """Findings that fail the audit."""
        return [f for f in self.findings if f.severity == "error"]


def collect_sources(
    paths: Iterable[Path], tool: Tool | None = None
) -> tuple[list[PolicySource], list[IamFinding]]:
    """Read every path into policies plus findings raised while reading.

    A directory is read as Terraform (its ``*.tf`` files); if it has none, the
    ``*.json`` files in it are read as policies. Role-wide rules run here, because
    only a Terraform directory shows all of a role's policies at once.

    Raises:
        PathError: a path does not exist or holds nothing to audit.
        ValidationError: a file cannot be parsed.
    """
    sources: list[PolicySource] = []
    findings: list[IamFinding] = []
    for path in paths:
        if not path.exists():
            raise PathError(f"{path}: no such file or directory", path=str(path))
        if path.is_dir() and any(path.glob("*.tf")):
            iam = extract_iam(load_directory(path))
            if tool is not None:
                for source in iam.policies:
                    source.tool = source.tool or tool
            sources += iam.policies
            findings += iam.findings
            for role, role_sources in sorted(iam.roles.items()):
                findings += check_role(role_sources[0].file, role, role_sources)
        elif path.is_dir():
            files = sorted(path.glob("*.json"))
            if not files:
                raise PathError(f"{path}: no .tf or .json files to audit", path=str(path))
            sources += [load_policy_file(f, tool) for f in files]
        elif path.suffix == ".tf":
            raise PathError(f"{path}: pass the Terraform directory, not one file", path=str(path))
        else:
            sources.append(load_policy_file(path, tool))
    return sources, findings


def audit_sources(sources: list[PolicySource]) -> list[IamFinding]:
    """Run our rules and parliament on already-loaded policies."""
    findings: list[IamFinding] = []
    for source in sources:
        for stmt in source.statements():
            findings += check_statement(source, stmt)
        findings += parliament_findings(source)
        for expression in source.unresolved:
            findings.append(
                IamFinding(
                    file=source.file,
                    policy=source.name,
                    role=source.role,
                    tool=source.tool,
                    statement="(policy)",
                    rule="unresolved_reference",
                    severity="warning",
                    message=f"{expression} could not be resolved; the resource it names was "
                    "not checked",
                )
            )
    return findings


def audit_iam(paths: Iterable[str | Path], tool: Tool | None = None) -> IamReport:
    """Audit IAM policy files and Terraform directories.

    Args:
        paths: policy JSON files and/or Terraform directories.
        tool: the tool whose role the JSON policies belong to, when the file or role
            name does not say; ``None`` treats unknown roles as shared by all tools.

    Returns:
        The report; ``verdict`` is ``fail`` when any finding is an error.

    Raises:
        PathError: a path does not exist or holds nothing to audit.
        ValidationError: a file cannot be parsed.
    """
    path_list = [Path(p) for p in paths]
    sources, findings = collect_sources(path_list, tool)
    findings = audit_sources(sources) + findings
    findings.sort(key=lambda f: (f.file, f.policy, f.statement, f.rule))
    policies = [
        AuditedPolicy(
            file=s.file,
            policy=s.name,
            role=s.role,
            tool=s.tool,
            statements=len(s.statements()),
            unresolved=s.unresolved,
        )
        for s in sources
    ]
    verdict: Literal["pass", "fail"] = (
        "fail" if any(f.severity == "error" for f in findings) else "pass"
    )
    return IamReport(
        verdict=verdict, paths=[str(p) for p in path_list], policies=policies, findings=findings
    )
