"""parliament's general IAM lint, mapped onto our findings.

parliament (with its community auditors) reports on whole policies; :func:`analyze` runs it
for the audit and for the gate's ``parliament`` scanner alike and says which statement each
finding is on and why a finding is no least-privilege problem
(:func:`backend.posture.iam_scope.quiet_reason`). Which findings fail the audit and which
are warnings is on :func:`parliament_findings`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.posture.iam_model import IamFinding, PolicySource, Severity
from backend.posture.iam_scope import quiet_reason
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
# "*" on actions that take resources, neither confined nor metadata reads (else quiet).
_STAR_ISSUES = frozenset({"RESOURCE_STAR", "RESOURCE_EFFECTIVELY_STAR"})
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


def _single_values(document: Any) -> Any:
    """``Bool``/``Null`` tests with a one-item list as a scalar (parliament 1.6.4 crashes
    on the list, which Terraform's ``aws_iam_policy_document`` always writes)."""
    if isinstance(document, list):
        return [_single_values(v) for v in document]
    if not isinstance(document, dict):
        return document
    out = {}
    for key, value in document.items():
        if str(key).lower().startswith(("bool", "null")) and isinstance(value, dict):
            value = {
                k: v[0] if isinstance(v, list) and len(v) == 1 else v for k, v in value.items()
            }
        out[key] = _single_values(value)
    return out


@dataclass
class Hit:
    """One parliament finding, with the statement it is on and why it may be quiet.

    Attributes:
        issue: parliament's issue id (``RESOURCE_STAR``...).
        title: its title.
        severity: parliament's severity (``LOW``...).
        detail: parliament's detail.
        location: parliament's location (line, actions...).
        statement: index of the statement the finding is on, when it is on one.
        quiet: why it is no least-privilege problem (:func:`quiet_reason`), else ``None``.
    """

    issue: str
    title: str
    severity: str
    detail: Any
    location: dict[str, Any]
    statement: int | None
    quiet: str | None

    def actions(self) -> list[str]:
        """The actions the finding names (community auditors) or lists (RESOURCE_STAR)."""
        found = self.location.get("actions") or (
            self.detail.get("actions") if isinstance(self.detail, dict) else None
        )
        if found:
            return [str(a) for a in found]
        if isinstance(self.detail, list) and all(isinstance(a, str) for a in self.detail):
            return list(self.detail)
        return []


def analyze(text: str, filepath: str, document: dict[str, Any] | None) -> list[Hit]:
    """Run parliament (community auditors included) on one policy's text.

    Args:
        text: the policy as parliament reads it (its line numbers are the text's).
        filepath: the name parliament puts in its locations.
        document: the same policy parsed, to judge the findings; ``None`` if unparsable.
    """
    import parliament

    from backend.posture.iam_rules import is_data_action

    _configure()
    try:
        policy = parliament.analyze_policy_string(
            text, filepath=filepath, include_community_auditors=True
        )
    except Exception:  # parliament 1.6.4 crashes on some valid shapes: retry normalized
        if document is None:
            raise
        text, _ = _render(_single_values(document))
        policy = parliament.analyze_policy_string(
            text, filepath=filepath, include_community_auditors=True
        )
    where: dict[int, int] = {}
    for index, stmt in enumerate(policy.statements):
        for finding in stmt.findings:
            where[id(finding)] = index
    hits = []
    for raw in policy.findings:
        statement = where.get(id(raw))
        finding = parliament.enhance_finding(raw)
        location = finding.location if isinstance(finding.location, dict) else {}
        hit = Hit(
            finding.issue,
            str(finding.title or finding.issue),
            str(finding.severity),
            finding.detail,
            location,
            statement,
            None,
        )
        hit.quiet = quiet_reason(
            hit.issue, document, statement, hit.actions(), is_data_action, hit.detail
        )
        hits.append(hit)
    return hits


def parliament_findings(source: PolicySource) -> list[IamFinding]:
    """Run parliament (community auditors included) on one policy.

    Which findings fail the audit:

    * ``UNKNOWN_ACTION``/``UNKNOWN_PREFIX`` (a typo grants nothing and hides intent),
      malformed documents, invalid ARNs and actions whose resources match nothing;
    * anything parliament rates MEDIUM or worse, except a finding whose actions are all
      in the role's expected-actions table (``rds-db:connect`` *is* a credentials call,
      and it is exactly what the tool needs; our rules already check its resource);
    * ``RESOURCE_STAR``: ``"*"`` on actions that take a resource, which the gate's
      ``parliament`` scanner blocks too;
    * everything else (LOW) is reported as a warning, and so is a finding that
      :func:`backend.posture.iam_scope.quiet_reason` shows is no least-privilege problem
      (a confined ``Resource "*"``, metadata reads, grants scoped to named resources).
    """
    text, ranges = _render(_single_values(source.document))
    allowed = allowed_actions(source.tool)
    out = []
    for hit in analyze(text, source.file, source.document):
        location = hit.location
        line = location.get("line")
        label = "(policy)"
        for first, last, stmt_label in ranges:
            if isinstance(line, int) and first <= line <= last:
                label = stmt_label
        detail = hit.detail
        # Community auditors put the actions they object to in the location.
        actions = location.get("actions") or (
            detail.get("actions") if isinstance(detail, dict) else None
        )
        if actions and all(str(a).lower() in allowed for a in actions):
            continue
        severity: Severity = (
            "error"
            if hit.issue in _ALWAYS_FAIL
            or _RANK.get(hit.severity, 5) >= _RANK["MEDIUM"]
            or hit.issue in _STAR_ISSUES
            else "warning"
        )
        name = location.get("string")
        if "${" in str(name or ""):
            # A Terraform reference we could not render is already reported as
            # unresolved_reference; parliament only sees our leftover "${...}".
            severity = "warning"
        what = f"{name}" if name else _short(detail or actions or "")
        if hit.quiet:
            severity = "warning"
            what += f" (not over-broad: {hit.quiet})"
        out.append(
            IamFinding(
                file=source.file,
                policy=source.name,
                role=source.role,
                tool=source.tool,
                statement=label,
                rule=f"parliament:{hit.issue}",
                severity=severity,
                message=f"{hit.title}: {what}",
                source="parliament",
            )
        )
    return out
