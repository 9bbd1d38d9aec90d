"""parliament's general IAM lint, mapped onto our findings.

parliament (with its community auditors) reports on whole policies by line; we render the
policy one statement per block of lines so each finding can name the statement it came
from. Which findings fail the audit and which are warnings is on
:func:`parliament_findings`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from backend.posture.iam_model import IamFinding, PolicySource, Severity
from backend.posture.iam_tools import allowed_actions

_ALWAYS_FAIL = frozenset(
    {
        "UNKNOWN_ACTION",
        "UNKNOWN_PREFIX",
        "MALFORMED_JSON",
        "MALFORMED",
        "EXCEPTION",
        "INVALID_ARN",
        "RESOURCE_MISMATCH",
    }
)
_RANK = {"MUTE": 0, "INFO": 1, "LOW": 2, "MEDIUM": 3, "HIGH": 4, "CRITICAL": 5}
_configured = False


def _configure() -> None:
    """Load the community auditors' titles and severities, as the CLI does, once."""
    global _configured
    if _configured:
        return
    import parliament

    from backend.posture.iam_speed import install

    install()
    override = Path(parliament.__file__).parent / "community_auditors" / "config_override.yaml"
    parliament.override_config(str(override))
    _configured = True


def _render(document: dict[str, Any]) -> tuple[str, list[tuple[int, int, str]]]:
    """Dump the policy with each statement on its own line range.

    Returns:
        The JSON text and ``(first_line, last_line, label)`` per statement.
    """
    head = {k: v for k, v in document.items() if k != "Statement"}
    statements = document.get("Statement", [])
    if isinstance(statements, dict):
        statements = [statements]
    lines = ["{"]
    lines += [f"{json.dumps(k)}: {json.dumps(v)}," for k, v in head.items()]
    lines.append('"Statement": [')
    ranges = []
    for index, stmt in enumerate(statements):
        chunk = json.dumps(stmt, indent=2).splitlines()
        if index < len(statements) - 1:
            chunk[-1] += ","
        sid = stmt.get("Sid") if isinstance(stmt, dict) else None
        label = f'Sid "{sid}"' if sid else f"statement #{index + 1}"
        ranges.append((len(lines) + 1, len(lines) + len(chunk), label))
        lines += chunk
    lines += ["]", "}"]
    return "\n".join(lines), ranges


def _short(detail: object) -> str:
    if isinstance(detail, list) and len(detail) > 4:
        return f"{', '.join(map(str, detail[:4]))} ... ({len(detail)} in all)"
    if isinstance(detail, dict) and "actions" in detail:
        return ", ".join(detail["actions"])
    return str(detail)


def parliament_findings(source: PolicySource) -> list[IamFinding]:
    """Run parliament (community auditors included) on one policy.

    Which findings fail the audit:

    * ``UNKNOWN_ACTION``/``UNKNOWN_PREFIX`` (a typo grants nothing and hides intent),
      malformed documents, invalid ARNs and actions whose resources match nothing;
    * anything parliament rates MEDIUM or worse, except a finding whose actions are all
      in the role's expected-actions table (``rds-db:connect`` *is* a credentials call,
      and it is exactly what the tool needs; our rules already check its resource);
    * everything else (LOW) is reported as a warning.
    """
    import parliament

    _configure()
    text, ranges = _render(source.document)
    policy = parliament.analyze_policy_string(
        text, filepath=source.file, include_community_auditors=True
    )
    allowed = allowed_actions(source.tool)
    out = []
    for raw in policy.findings:
        finding = parliament.enhance_finding(raw)
        location = finding.location if isinstance(finding.location, dict) else {}
        line = location.get("line")
        label = "(policy)"
        for first, last, stmt_label in ranges:
            if isinstance(line, int) and first <= line <= last:
                label = stmt_label
        detail = finding.detail
        # Community auditors put the actions they object to in the location.
        actions = location.get("actions") or (
            detail.get("actions") if isinstance(detail, dict) else None
        )
        if actions and all(str(a).lower() in allowed for a in actions):
            continue
        severity: Severity = (
            "error"
            if finding.issue in _ALWAYS_FAIL or _RANK.get(finding.severity, 5) >= _RANK["MEDIUM"]
            else "warning"
        )
        name = location.get("string")
        if "${" in str(name or ""):
            # A Terraform reference we could not render is already reported as
            # unresolved_reference; parliament only sees our leftover "${...}".
            severity = "warning"
        what = f"{name}" if name else _short(detail or actions or "")
        out.append(
            IamFinding(
                file=source.file,
                policy=source.name,
                role=source.role,
                tool=source.tool,
                statement=label,
                rule=f"parliament:{finding.issue}",
                severity=severity,
                message=f"{finding.title or finding.issue}: {what}",
                source="parliament",
            )
        )
    return out
