"""``cadencia audit``: least-privilege audits, one sub-command each.

``audit iam`` lives here. Other audits register themselves through
:data:`AUDIT_SUBCOMMANDS`: each entry is ``"module:function"`` where
``function(subparsers)`` adds one sub-parser and sets ``handler``. Imports stay lazy
so ``cadencia --help`` does not load parliament or python-hcl2.
"""

from __future__ import annotations

import argparse
import importlib
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from backend.posture.iam import IamReport

# Registry of further audits.
AUDIT_SUBCOMMANDS: tuple[str, ...] = ("backend.commands._audit_grants:register",)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``audit`` and its sub-commands to the ``cadencia`` parser."""
    parser = subparsers.add_parser(
        "audit",
        help="least-privilege audits (exit 1 on a violation)",
        description="Least-privilege audits. Each exits 0 when clean, 1 on a violation, "
        "2 when its input cannot be read (audit iam: 3 when no policy was found; audit "
        "grants: 3 when only the cluster exposes the tool roles, 4 when that cannot be "
        "verified).",
    )
    sub = parser.add_subparsers(dest="audit_command", metavar="AUDIT", required=True)
    register_iam(sub)
    for spec in AUDIT_SUBCOMMANDS:
        module_name, _, function = spec.partition(":")
        getattr(importlib.import_module(module_name), function)(sub)


def register_iam(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``audit iam PATH... [--tool T] [--json]``."""
    parser = subparsers.add_parser(
        "iam",
        help="lint IAM policies and Terraform for least privilege",
        description="Audit IAM policy JSON files and Terraform directories: wildcard "
        "actions, Resource '*' on data/secret actions, wildcard db users and secret ARNs, "
        "roles other than emitir-reembolso's reaching the gateway secret, grants a tool "
        "never uses (plus parliament's general checks).",
    )
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="policy .json/.yaml file (CloudFormation too), .tf file or Terraform dir",
    )
    parser.add_argument(
        "--tool",
        default=None,
        help="tool whose role the JSON policies belong to (consulta, reembolso, cadastro); "
        "default: guessed from role/file name, else the role counts as shared",
    )
    parser.add_argument(
        "--general",
        action="store_true",
        help="policies of any service, not Lab 87's tool roles: only the general rules and "
        "parliament's (no 'grant a tool never uses'); the rules the gate applies to a PR",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(handler=run_iam)


NO_POLICY_EXIT = 3


def run_iam(args: argparse.Namespace) -> int:
    """Run the IAM audit; 0 clean, 1 violation, 3 no policy found (input errors → 2)."""
    from backend.exceptions import ValidationError
    from backend.posture.iam import audit_iam
    from backend.posture.iam_tools import parse_tool

    if args.general and args.tool:
        raise ValidationError(
            "--general judges any policy by the general rules; --tool names a Lab 87 "
            "tool's role: give one or the other"
        )
    tool = parse_tool(args.tool) if args.tool else None
    report = audit_iam(args.paths, tool=tool, lab_rules=not args.general)
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        _print_iam(report)
    return {"fail": 1, "no_policy": NO_POLICY_EXIT}.get(report.verdict, 0)


def _print_iam(report: IamReport) -> None:
    """Findings grouped by file, then policy, then statement; lines are never re-wrapped."""
    from rich.console import Console
    from rich.markup import escape

    console = Console(soft_wrap=True)
    read = {r.file: r.policies for r in report.files}
    files = sorted(
        set(read) | {p.file for p in report.policies} | {f.file for f in report.findings}
    )
    for file in files:
        findings = [f for f in report.findings if f.file == file]
        policies = sorted({(p.policy, p.role, p.tool) for p in report.policies if p.file == file})
        policies += sorted({(f.policy, f.role, f.tool) for f in findings} - set(policies), key=str)
        errors = sum(f.severity == "error" for f in findings)
        found = read.get(file, 0)
        if not found and not findings:
            console.print(f"\n[bold yellow]none[/] [bold]{escape(file)}[/] — no policy found")
            continue
        mark = "[bold red]FAIL[/]" if errors else "[bold green]ok[/]"
        console.print(f"\n{mark} [bold]{escape(file)}[/] — {found} policies, {errors} errors")
        for policy, role, tool in policies:
            who = f"role {role}" if role else "no role known (treated as shared by all tools)"
            console.print(f"  [bold]{escape(policy)}[/] · {escape(who)} · {tool or 'any tool'}")
            mine = [f for f in findings if (f.policy, f.role) == (policy, role)]
            for statement in sorted({f.statement for f in mine}):
                console.print(f"    [cyan]{escape(statement)}[/]")
                for f in (f for f in mine if f.statement == statement):
                    level = "[red]ERR [/]" if f.severity == "error" else "[yellow]warn[/]"
                    console.print(f"      {level} [dim]{f.rule}[/] {escape(f.message)}")
    errors = len(report.errors)
    warnings = len(report.findings) - errors
    total = sum(read.values())
    if report.verdict == "no_policy":
        console.print(
            f"\n[bold yellow]audit iam: no policy found[/] in {len(read)} files — "
            "nothing was audited"
        )
    elif report.verdict == "fail":
        console.print(
            f"\n[bold red]audit iam: FAIL[/] — {errors} violations, {warnings} warnings "
            f"({total} policies in {len(read)} files)"
        )
    else:
        console.print(
            f"\n[bold green]audit iam: pass[/] — 0 violations, {warnings} warnings "
            f"({total} policies in {len(read)} files)"
        )
