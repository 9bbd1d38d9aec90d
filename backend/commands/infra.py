"""``cadencia infra plan REPO [--module-map FILE] --out DIR``: the Infra agent's proposal.

``DIR`` mirrors the repository layout (each module's Dockerfile at its module path,
``compose.yaml`` and ``.github/workflows/`` at the root) so it can be copied over the
repository. Exit 0 when written, 2 on bad input (raised as a ``CadenciaError``).
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
    plan.set_defaults(handler=run_plan)


def run_plan(args: argparse.Namespace) -> int:
    """Plan, write the files, print a summary; return the exit code."""
    from rich.console import Console
    from rich.table import Table

    from backend.exceptions import PathError, ValidationError
    from backend.infra.git import validate_path
    from backend.infra.planner import module_file, plan, resolve_module_map
    from backend.module_map import load_module_map

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
    files = plan(repo, module_map)
    for rel, content in sorted(files.items()):
        validate_path(rel)
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")

    console = Console()
    table = Table(title=f"Infra plan for {repo}")
    for column in ("module", "path", "language", "kind", "port", "Dockerfile"):
        table.add_column(column)
    for module in module_map.modules:
        dockerfile = module_file(module, "Dockerfile")
        table.add_row(
            module.name,
            module.path,
            module.language,
            module.kind,
            str(module.port or "-"),
            dockerfile if dockerfile in files else "-",
        )
    console.print(table)
    console.print(f"wrote {len(files)} files to {out}:")
    for rel in sorted(files):
        console.print(f"  {rel}")
    return 0
