"""IAM wherever a PR writes it, judged by the rules of ``cadencia audit iam``.

The policies are found by the audit's own readers (JSON/YAML and Terraform), then judged by
the audit's general rules and, for what the ``parliament`` scanner cannot see, by
parliament in this process; :func:`scan` gives the details. An audit error fails the gate,
a warning is advice, and a file that should hold IAM but cannot be read is an error too.
The floor (:func:`check_policy`) stays under parliament, which misses ``Action "*"`` and
``NotAction``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from backend.exceptions import CadenciaError
from backend.gates.findings import Finding, ScanResult
from backend.gates.scanners._base import ScanContext
from backend.gates.targets import is_iam_policy, is_template
from backend.posture.iam_documents import POLICY_SUFFIXES, load_file, read_text
from backend.posture.iam_model import IamFinding, PolicySource

TOOL = "iam-floor"
# YAML/JSON that is not a policy is common (package.json, workflows): only files whose
# text mentions a policy are read, so an unrelated broken file is not an IAM finding.
_MARKERS = ("Statement", "AWS::IAM::", "PolicyDocument", "ManagedPolicyArns")


def targets(ctx: ScanContext) -> list[str]:
    """The Terraform directories and the policy documents of the copy."""
    terraform_dirs, documents = _targets(ctx)
    return terraform_dirs + documents


# Terraform grants IAM only through an aws_iam_* resource or data source, a resource's own
# policy argument (bucket, key, queue policies, managed_policy_arns), a policy JSON's
# Statement or a module input; a directory whose .tf files say none of these has no IAM, and
# parsing HCL costs a third of a second before the first statement.
_TF_MARKERS = re.compile(r"iam|polic|statement|module", re.IGNORECASE)


def _targets(ctx: ScanContext) -> tuple[list[str], list[str]]:
    tf_files: dict[str, list[str]] = {}
    for f in ctx.files:
        if f.endswith(".tf"):
            tf_files.setdefault(str(PurePosixPath(f).parent), []).append(f)
    terraform_dirs = sorted(
        folder
        for folder, files in tf_files.items()
        if any(_tf_mentions_iam(ctx.root / f) for f in files)
    )
    documents = [
        f
        for f in ctx.files
        if f.endswith(POLICY_SUFFIXES)
        and _mentions_iam(ctx.root / f)
        and not is_template(ctx.root, f)  # Helm: not YAML until rendered
    ]
    return terraform_dirs, documents


def _tf_mentions_iam(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True  # unreadable: let the reader say so
    return bool(_TF_MARKERS.search(text))


def scan(ctx: ScanContext) -> ScanResult | None:
    """Check every IAM policy of the copy; ``None`` when there is none to check.

    It parses the PR's JSON, YAML and HCL: the gate runs it in :mod:`backend.gates.sandbox`.

    The policies are found by the audit's own readers (:mod:`backend.posture.iam_documents`
    for JSON/YAML, CloudFormation included, BOMs included; :mod:`backend.posture.terraform_iam`
    for Terraform: ``jsonencode``, heredocs, ``aws_iam_policy_document``, user/group/role
    policies, attachments, ``managed_policy_arns``, module inputs), then judged by the audit's
    general rules (everything but the Lab 87 tool table) and, for the policies the
    ``parliament`` scanner cannot see (anything but a plain UTF-8 policy JSON), by parliament
    in this process. An audit error fails the gate; an audit warning is advice. A file that
    should hold IAM but cannot be read (broken HCL, a binary ``.json``) is an error too: what
    the gate cannot read, it cannot pass.
    """
    terraform_dirs, documents = _targets(ctx)
    if not terraform_dirs and not documents:
        return None
    from backend.posture.iam import audit_sources, read_terraform
    from backend.posture.iam_parliament import parliament_findings

    sources: list[PolicySource] = []
    found: list[IamFinding] = []
    findings: list[Finding] = []
    for rel in documents:
        ctx.reading(rel)
        try:
            read, extra = load_file(ctx.root / rel)
        except CadenciaError as exc:
            findings.append(_finding(rel, "iam-unreadable", f"cannot be audited: {exc}"))
            continue
        sources += read
        found += extra
    for rel_dir in terraform_dirs:
        directory = ctx.root / rel_dir
        if not any(directory.glob("*.tf")):
            continue
        ctx.reading(rel_dir)
        try:
            read, extra = read_terraform(directory, lab_rules=False)
        except CadenciaError as exc:
            findings.append(
                _finding(rel_dir, "iam-unreadable", f"Terraform cannot be audited: {exc}")
            )
            continue
        sources += read
        found += extra
    covered = [s for s in sources if is_iam_policy(ctx.root, _relative(ctx.root, s.file))]
    others = [s for s in sources if s not in covered]
    try:
        found += audit_sources(covered, lab_rules=False, parliament=False)
        for source in others:
            ctx.reading(_relative(ctx.root, source.file))
            own = audit_sources([source], lab_rules=False, parliament=False)
            found += own
            # parliament costs ~2 s on "Action: *"; a policy our rules already fail
            # cannot fail harder, so it runs only where it may decide the verdict.
            if not any(f.severity == "error" for f in own):
                found += parliament_findings(source)
    except CadenciaError as exc:  # a statement that is not an object, no Statement list
        findings.append(_finding("", "iam-unreadable", f"a policy cannot be audited: {exc}"))
    for source in sources:
        findings += check_policy(source.document, _relative(ctx.root, source.file))
    findings += [_from_audit(ctx.root, f) for f in found if not _floor_covers(f)]
    return ScanResult.from_findings(TOOL, findings)


def _mentions_iam(path: Path) -> bool:
    try:
        text = read_text(path)
    except CadenciaError:
        # Binary or unknown encoding: a .json the gate cannot decode may hide a policy.
        return path.suffix == ".json"
    return any(marker in text for marker in _MARKERS)


def _floor_covers(finding: IamFinding) -> bool:
    """The floor's own finding says the same (``Action "*"``, ``Allow`` + ``NotAction``)."""
    return (finding.rule == "wildcard_action" and finding.message.startswith('action "*" ')) or (
        finding.rule == "not_element_allow" and "NotAction" in finding.message
    )


def _relative(root: Path, file: str) -> str:
    try:
        return Path(file).relative_to(root).as_posix()
    except ValueError:
        return file


def _from_audit(root: Path, finding: IamFinding) -> Finding:
    where = (
        finding.policy
        if finding.statement.startswith("(")
        else (f"{finding.policy} {finding.statement}")
    )
    return Finding(
        file=_relative(root, finding.file),
        line=None,
        tool=TOOL,
        rule=f"iam-{finding.rule.replace('_', '-').replace(':', '-').lower()}",
        severity="error" if finding.severity == "error" else "info",
        message=f"{where}: {finding.message}",
    )


def check_policy(policy: Mapping[str, object], file: str = "policy.json") -> list[Finding]:
    """Findings for ``Allow`` statements granting every action, or using ``NotAction``.

    The floor under parliament stays: parliament (1.6.4) reports nothing for
    ``"Action": "*", "Resource": "*"`` nor for ``Allow`` with ``NotAction``.
    """
    statements = policy.get("Statement")
    if isinstance(statements, dict):
        statements = [statements]
    if not isinstance(statements, list):
        return []
    findings = []
    for index, statement in enumerate(statements):
        if not isinstance(statement, dict) or statement.get("Effect") != "Allow":
            continue
        where = f"statement {statement.get('Sid') or index}"
        actions = _as_list(statement.get("Action"))
        if "*" in actions or "*:*" in actions:
            findings.append(_finding(file, "iam-action-star", f"{where} allows every action ('*')"))
        if "NotAction" in statement:
            findings.append(
                _finding(
                    file,
                    "iam-allow-notaction",
                    f"{where} uses Allow with NotAction: it grants everything else",
                )
            )
    return findings


def _as_list(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


def _finding(file: str, rule: str, message: str) -> Finding:
    return Finding(file=file, line=None, tool=TOOL, rule=rule, severity="error", message=message)
