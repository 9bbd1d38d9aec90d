"""A floor under parliament: wildcard grants it does not report.

parliament (1.6.4) reports nothing for ``"Action": "*", "Resource": "*"`` — full
admin — nor for an ``Allow`` with ``NotAction``. These in-process checks fail such
statements in any IAM policy JSON of the copy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from backend.gates.findings import Finding, ScanResult
from backend.gates.scanners._base import ScanContext
from backend.gates.targets import is_iam_policy

TOOL = "iam-floor"


def scan(ctx: ScanContext) -> ScanResult | None:
    """Check every IAM policy JSON of the copy; ``None`` when there is none."""
    targets = [f for f in ctx.files if is_iam_policy(ctx.root, f)]
    if not targets:
        return None
    findings: list[Finding] = []
    for rel in targets:
        findings.extend(check_policy(json.loads((ctx.root / rel).read_text(encoding="utf-8")), rel))
    return ScanResult.from_findings(TOOL, findings)


def check_policy(policy: Mapping[str, object], file: str = "policy.json") -> list[Finding]:
    """Findings for ``Allow`` statements granting every action, or using ``NotAction``."""
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
