"""The IAM least-privilege audit behind ``cadencia audit iam``.

``audit_iam(paths)`` reads policy files (JSON or YAML, bare documents, CLI output,
CloudFormation; see :mod:`backend.posture.iam_documents`) and Terraform (a directory,
or one ``.tf`` file read with its directory), then runs the project's rules
(:mod:`backend.posture.iam_rules`) and parliament (:mod:`backend.posture.iam_parliament`)
on every policy. A least-privilege violation is an ``error`` finding. The report
says how many policies each file held: reading nothing is ``no_policy``, never a pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from backend.exceptions import PathError
from backend.posture.iam_documents import POLICY_SUFFIXES, load_file
from backend.posture.iam_model import IamFinding, PolicySource, Tool
from backend.posture.iam_parliament import parliament_findings
from backend.posture.iam_rules import check_role, check_statement
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


class ReadFile(BaseModel):
    """One file the audit read and how many policies it found in it."""

    file: str
    policies: int


class IamReport(BaseModel):
    """The audit's result; ``--json`` prints exactly this model.

    ``verdict`` is ``no_policy`` when no file held a policy or an attachment: an
    audit that read nothing must not look like a clean one.
    """

    verdict: Literal["pass", "fail", "no_policy"]
    paths: list[str]
    files: list[ReadFile]
    policies: list[AuditedPolicy]
    findings: list[IamFinding]

    @property
    def errors(self) -> list[IamFinding]:
        """Findings that fail the audit."""
        return [f for f in self.findings if f.severity == "error"]


def collect_sources(
    paths: Iterable[Path], tool: Tool | None = None, *, lab_rules: bool = True
) -> tuple[list[PolicySource], list[IamFinding], dict[str, int]]:
    """Read every path into policies, findings raised while reading, and files read.

    A directory is read as Terraform (its ``*.tf`` files); if it has none, its policy
    files (``.json``, ``.yaml``...) are read. One ``.tf`` file is read with its
    directory (references cross files) and only its own policies are kept.
    Role-wide rules (``lab_rules``) run here, because only a Terraform directory shows
    all of a role's policies at once.

    Returns:
        The policies, the findings, and every file read -> policies found in it.

    Raises:
        PathError: a path does not exist or cannot be read.
        ValidationError: a file cannot be parsed.
    """
    sources: list[PolicySource] = []
    findings: list[IamFinding] = []
    files: dict[str, int] = {}
    for path in paths:
        if not path.exists():
            raise PathError(f"{path}: no such file or directory", path=str(path))
        if (path.is_dir() and any(path.glob("*.tf"))) or path.suffix == ".tf":
            directory = path if path.is_dir() else path.parent
            read, found = read_terraform(directory, tool, lab_rules=lab_rules)
            if not path.is_dir():
                read = [s for s in read if Path(s.file) == path]
                found = [f for f in found if Path(f.file) == path]
            tf_files = sorted(directory.glob("*.tf")) if path.is_dir() else [path]
            files.update({str(f): 0 for f in tf_files})
            sources += read
            findings += found
        else:
            candidates = (
                sorted(f for f in path.iterdir() if f.suffix in POLICY_SUFFIXES)
                if path.is_dir()
                else [path]
            )
            if not candidates:
                raise PathError(f"{path}: no .tf or policy files to audit", path=str(path))
            for candidate in candidates:
                read, found = load_file(candidate, tool)
                files[str(candidate)] = 0
                sources += read
                findings += found
    for source in sources:
        files[source.file] = files.get(source.file, 0) + 1
    return sources, findings, files


def read_terraform(
    directory: Path, tool: Tool | None = None, *, lab_rules: bool = True
) -> tuple[list[PolicySource], list[IamFinding]]:
    """The policies of one Terraform directory plus the findings raised reading it."""
    iam = extract_iam(load_directory(directory))
    if tool is not None:
        for source in iam.policies:
            source.tool = source.tool or tool
    findings = list(iam.findings)
    if lab_rules:
        for role, role_sources in sorted(iam.roles.items()):
            findings += check_role(role_sources[0].file, role, role_sources)
    return iam.policies, findings


def audit_sources(
    sources: list[PolicySource], *, lab_rules: bool = True, parliament: bool = True
) -> list[IamFinding]:
    """Run our rules and parliament on already-loaded policies.

    Args:
        sources: the policies.
        lab_rules: also the rules that know Lab 87's tools (grants a tool never uses);
            the gate, reviewing any repository's IAM, runs the general rules only.
        parliament: also parliament's checks.
    """
    findings: list[IamFinding] = []
    for source in sources:
        for stmt in source.statements():
            findings += check_statement(source, stmt, lab_rules=lab_rules)
        if parliament:
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


def audit_iam(
    paths: Iterable[str | Path], tool: Tool | None = None, *, lab_rules: bool = True
) -> IamReport:
    """Audit IAM policy files and Terraform directories.

    Args:
        paths: policy JSON files and/or Terraform directories.
        tool: the tool whose role the JSON policies belong to, when the file or role
            name does not say; ``None`` treats unknown roles as shared by all tools.
        lab_rules: also the rules that know Lab 87's tools (a grant a tool never uses);
            ``False`` judges policies of any service as the gate does.

    Returns:
        The report; ``verdict`` is ``fail`` when any finding is an error,
        ``no_policy`` when nothing was found to audit.

    Raises:
        PathError: a path does not exist or cannot be read.
        ValidationError: a file cannot be parsed.
    """
    path_list = [Path(p) for p in paths]
    sources, findings, files = collect_sources(path_list, tool, lab_rules=lab_rules)
    findings = audit_sources(sources, lab_rules=lab_rules) + findings
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
    verdict: Literal["pass", "fail", "no_policy"] = (
        "fail" if any(f.severity == "error" for f in findings) else "pass"
    )
    if not sources and not findings:
        verdict = "no_policy"
    return IamReport(
        verdict=verdict,
        paths=[str(p) for p in path_list],
        files=[ReadFile(file=f, policies=n) for f, n in sorted(files.items())],
        policies=policies,
        findings=findings,
    )
