"""zizmor (PyPI ``zizmor``): static analysis of GitHub Actions workflows and actions.

It beats the shipped semgrep rules where a workflow has to be understood, not
pattern-matched: which contexts an attacker controls, ``env:`` indirection into a script,
dangerous triggers, excessive permissions, unpinned third-party actions, cache poisoning.
Offline and unsilenceable like the other scanners; :func:`command` gives the flags and
:func:`parse` what blocks.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath

from backend.gates.findings import Finding, ScanResult, Severity
from backend.gates.scanners._base import (
    RULES_DIR,
    ScanContext,
    ToolFailed,
    find_binary,
    run_tool,
    tail,
)

TOOL = "zizmor"
CONFIG = RULES_DIR / "zizmor.yml"
_SEVERITY: dict[str, Severity] = {"high": "error", "medium": "error", "low": "warning"}
_ACTION_NAMES = {"action.yml", "action.yaml"}
_RUNS = re.compile(r"^runs\s*:", re.M)
_COMPLETED = re.compile(r"completed (.+?)\s*$", re.M)


def is_workflow(rel: str) -> bool:
    """A file GitHub runs as a workflow: ``.github/workflows/*.yml`` (direct children)."""
    path = PurePosixPath(rel)
    return (
        path.suffix in {".yml", ".yaml"}
        and path.parent.name == "workflows"
        and path.parent.parent.name == ".github"
    )


def command(binary: str, targets: list[str]) -> list[str]:
    """The exact command line (the benchmark runs it directly too).

    Offline and unsilenceable: ``--offline`` (no GitHub API, no online audits), the gate's own
    ``--config`` (a ``zizmor.yml`` in the PR is never read) and ``--no-ignores`` (inline
    ``# zizmor: ignore[...]`` comments do not count). The gate asks for medium confidence and
    up (zizmor's low-confidence findings are its own "may be a false positive").
    """
    return [
        binary,
        "--offline",
        "--config",
        str(CONFIG),
        "--no-ignores",
        "--no-progress",
        "--color",
        "never",
        "--no-exit-codes",
        "--min-confidence",
        "medium",
        "--min-severity",
        "low",
        "--format",
        "json",
        "--",
        *targets,
    ]


def scan(ctx: ScanContext) -> ScanResult | None:
    """Audit every workflow and action definition of the copy; ``None`` when there is none."""
    targets = [rel for rel in ctx.files if is_workflow(rel) or _is_action(ctx, rel)]
    if not targets:
        return None
    binary = find_binary(TOOL)
    if binary is None:
        return ScanResult.skipped(TOOL, "zizmor not installed (pip install zizmor)")
    try:
        proc = run_tool(command(binary, targets), ctx)
        if proc.returncode != 0:
            if "no inputs collected" in proc.stderr:
                # Not one target could be read: each is a finding, the run itself is fine.
                return ScanResult.from_findings(TOOL, [_unreadable(t) for t in targets])
            raise ToolFailed(f"zizmor exited {proc.returncode}: {tail(proc.stderr)}")
        findings = parse(proc.stdout, proc.stderr)
        findings += [_unreadable(t) for t in unread(targets, proc.stderr)]
        return ScanResult.from_findings(TOOL, findings)
    except ToolFailed as exc:
        return ScanResult.skipped(TOOL, str(exc))


def _is_action(ctx: ScanContext, rel: str) -> bool:
    # ``action.yml`` is also a name other tools use: only a file with ``runs:`` is an action.
    if PurePosixPath(rel).name not in _ACTION_NAMES:
        return False
    try:
        return bool(_RUNS.search((ctx.root / rel).read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return False


def parse(stdout: str, stderr: str = "") -> list[Finding]:
    """zizmor's ``--format json`` (v1) findings to findings, at their primary location.

    Every finding blocks: high and medium severity are errors, low (e.g. ``${{ env.X }}`` fed
    from the event) a warning. A workflow zizmor cannot read (not YAML, not a workflow) is a
    warning finding on that file: GitHub would not run it as written and the gate cannot vouch
    for it. Attacker-controlled contexts zizmor understands include ``github.event.*.body``,
    bracket access, ``toJSON`` and ``format``.

    Raises:
        ToolFailed: the output is not zizmor's JSON list.
    """
    try:
        items = json.loads(stdout)
    except ValueError as exc:
        raise ToolFailed(f"zizmor gave no JSON: {tail(stderr or stdout)}") from exc
    if not isinstance(items, list):
        raise ToolFailed("zizmor JSON is not a list")
    return [_finding(item) for item in items if isinstance(item, dict)]


def unread(targets: list[str], stderr: str) -> list[str]:
    """Targets zizmor warned about and did not audit (it logs ``completed <path>`` per input)."""
    if "WARN" not in stderr or "failed to" not in stderr:
        return []
    done = set(_COMPLETED.findall(stderr))
    return [t for t in targets if t not in done]


def _finding(item: dict[str, object]) -> Finding:
    determinations = item.get("determinations")
    severity = (
        str(determinations.get("severity", "")).lower() if isinstance(determinations, dict) else ""
    )
    file, line, note = _primary(item.get("locations"))
    desc = str(item.get("desc", "")).strip()
    message = f"{desc}: {note}" if note else desc
    url = item.get("url")
    return Finding(
        file=file,
        line=line,
        tool=TOOL,
        rule=str(item.get("ident", "zizmor")),
        # An unknown severity still blocks: the gate fails closed on what it cannot read.
        severity=_SEVERITY.get(severity, "warning"),
        message=f"{message} ({url})" if url else message,
    )


def _primary(locations: object) -> tuple[str, int | None, str]:
    """``(file, 1-based line, annotation)`` of the primary location (else the first one)."""
    if not isinstance(locations, list) or not locations:
        return "", None, ""
    chosen = next(
        (
            loc
            for loc in locations
            if isinstance(loc, dict) and (loc.get("symbolic") or {}).get("kind") == "Primary"
        ),
        locations[0],
    )
    symbolic = chosen.get("symbolic") or {}
    key = symbolic.get("key") or {}
    local = key.get("Local") if isinstance(key, dict) else None
    file = str(local.get("verbatim_path", "")) if isinstance(local, dict) else ""
    start = ((chosen.get("concrete") or {}).get("location") or {}).get("start_point") or {}
    row = start.get("row")
    line = int(row) + 1 if isinstance(row, int) else None
    return file.removeprefix("./"), line, str(symbolic.get("annotation") or "")


def _unreadable(rel: str) -> Finding:
    return Finding(
        file=rel,
        line=None,
        tool=TOOL,
        rule="zizmor-unreadable",
        severity="warning",
        message="zizmor could not read this file as a GitHub Actions workflow or action "
        "(not valid YAML or not the workflow schema); GitHub would not run it as written",
    )
