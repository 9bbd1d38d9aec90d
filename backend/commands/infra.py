"""``cadencia infra plan REPO [--module-map FILE] --out DIR [--force]``: the Infra agent's
proposal.

``DIR`` mirrors the repository layout (each module's Dockerfile at its module path,
``compose.yaml`` and ``.github/workflows/`` at the root) so it can be copied over the
repository. A file already in ``DIR`` is never overwritten without ``--force``: the command
then writes nothing. Exit 0 when written, 2 on bad input or a refused overwrite (raised as
a ``CadenciaError``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``infra`` command and its ``plan`` sub-command."""
    parser = subparsers.add_parser(
        "infra", help="the Infra agent's tools", description="The Infra agent's tools."
    )
    sub = parser.add_subparsers(dest="infra_command", metavar="SUBCOMMAND", required=True)
    plan = sub.add_parser(
        "plan",
        help="propose Dockerfiles, compose and CI for a repository",
        description="Run the rule-based planner on REPO and write its proposal to DIR.",
    )
    plan.add_argument("repo", metavar="REPO", help="repository to plan for (only read)")
    plan.add_argument(
        "--module-map",
        metavar="FILE",
        default=None,
        help="module map JSON (default: detect modules from manifests)",
    )
    plan.add_argument(
        "--out",
        metavar="DIR",
        required=True,
        help="where to write the proposal, mirroring the repository layout",
    )
    plan.add_argument(
        "--force",
        action="store_true",
        help="overwrite files that already exist in DIR (default: refuse, write nothing)",
    )
    plan.set_defaults(handler=run_plan)


def run_plan(args: argparse.Namespace) -> int:
    """Plan, write the files, print a summary; return the exit code."""
    from rich.console import Console
    from rich.table import Table

    from backend.exceptions import ConflictError, PathError, ValidationError
    from backend.module_map import load_module_map
    from backend.planner import propose, resolve_module_map
    from backend.repo_paths import validate_path

    repo = Path(args.repo)
    if not repo.is_dir():
        raise ValidationError(f"repository {repo} does not exist or is not a directory")
    out = Path(args.out)
    git_dir = (repo / ".git").resolve()
    if out.resolve() == git_dir or out.resolve().is_relative_to(git_dir):
        raise PathError(f"--out {out} is inside the repository's .git directory")
    if out.exists() and not out.is_dir():
        raise PathError(f"--out {out} exists and is not a directory")
    module_map = (
        load_module_map(Path(args.module_map)) if args.module_map else resolve_module_map(repo)
    )
    proposal = propose(repo, module_map)
    files = proposal.files
    for rel in files:
        validate_path(rel)
    # Checked before the first write: a refusal leaves DIR exactly as it was.
    blocked = [rel for rel in sorted(files) if (out / rel).is_dir()]
    if blocked:
        raise PathError(f"--out {out}: {', '.join(blocked)} exist as directories; nothing written")
    existing = [rel for rel in sorted(files) if (out / rel).exists()]
    if existing and not args.force:
        raise ConflictError(
            f"--out {out} already holds {len(existing)} of the proposed files "
            f"({', '.join(existing)}); nothing written. Use --force to overwrite them."
        )
    for rel, content in sorted(files.items()):
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")

    console = Console()
    table = Table(title=f"Infra plan for {repo}")
    for column in ("module", "path", "kind", "port", "runtime", "start"):
        table.add_column(column, overflow="fold")
    for item in proposal.modules:
        module = item.module
        port = "-" if module.port is None else str(module.port)
        if item.host_port is not None and item.host_port != module.port:
            port = f"{item.host_port}->{module.port}"
        table.add_row(
            module.name,
            module.path,
            module.kind,
            port,
            item.runtime or "-",
            " ".join(item.start) if item.start else "-",
        )
    console.print(table)
    for note in proposal.notes:
        console.print(f"note: {note}", markup=False)
    for skipped in proposal.skipped:
        console.print(f"not planned: {skipped}", markup=False)
    console.print(f"wrote {len(files)} files to {out}:")
    for rel in sorted(files):
        console.print(f"  {rel}")
    return 0
