"""``cadencia teardown``: stop the tools, drop their roles, drop the ledger, verify."""

from __future__ import annotations

import argparse
import sys
from typing import IO, TYPE_CHECKING

from backend.commands._common import add_data_dir, add_database

if TYPE_CHECKING:
    from rich.console import Console

    from backend.posture.teardown import StepResult, TeardownPlan


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``teardown --database URL [--ledger URL] [--yes] [--dry-run] [--all-databases]``."""
    parser = sub.add_parser(
        "teardown",
        help="remove the tool roles, their grants and the ledger, then verify nothing is left",
        description="In order: (1) NOLOGIN + terminate the tool roles' sessions, (2) REASSIGN/DROP "
        "OWNED and DROP ROLE, (3) drop the ledger (DynamoDB table or SQL tables), (4) verify. "
        "Exit 1 if anything is left, if confirmation is refused, or if other databases "
        "still hold grants to the roles.",
    )
    add_database(parser)
    add_data_dir(parser)
    parser.add_argument("--ledger", default=None, help="ledger URL (default: the database)")
    parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--dry-run", action="store_true", help="print the plan; change nothing")
    parser.add_argument(
        "--all-databases",
        action="store_true",
        help="also revoke the roles' privileges in other databases of the cluster that hold some",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace, *, stdin: IO[str] | None = None) -> int:
    """0 when everything is gone and verified; 1 on abort, refusal or leftovers."""
    from rich.console import Console

    from backend.posture.teardown import ledger_target, plan_teardown, run_teardown
    from backend.settings import load_settings

    settings = load_settings(
        data_dir=args.data_dir, database_url=args.database, ledger_url=args.ledger
    )
    db_url = settings.resolved_database_url()
    ledger = ledger_target(settings.resolved_ledger_url(), settings)
    console = Console(soft_wrap=True)
    plan = plan_teardown(db_url, ledger, settings.role_prefix)
    _print_plan(console, plan, all_databases=args.all_databases)
    blocked = bool(plan.other_databases) and not args.all_databases
    if args.dry_run:
        if blocked:
            console.print(
                "[yellow]a real run would refuse to start: other databases hold grants[/]"
            )
        console.print("[bold]dry run[/]: nothing was changed")
        return 0
    if blocked:
        console.print(
            "[bold red]refused[/]: other databases still hold grants to the tool roles, so "
            "DROP ROLE would fail; nothing was changed. Re-run with --all-databases, or "
            "DROP OWNED BY the roles in each database listed above."
        )
        return 1
    if not args.yes and not confirm(console, stdin if stdin is not None else sys.stdin):
        return 1
    result = run_teardown(
        db_url,
        ledger,
        all_databases=args.all_databases,
        on_step=lambda s: _print_step(console, s),
        prefix=settings.role_prefix,  # this deployment's roles only, never another's
    )
    if result.ok:
        console.print("[bold green]teardown: done[/] — nothing left behind")
        return 0
    console.print("[bold red]teardown: FAILED[/] — see the steps above")
    return 1


def confirm(console: Console, stdin: IO[str]) -> bool:
    """Ask ``Proceed? [y/N]`` on a terminal; without one, refuse (scripts must pass --yes)."""
    if not stdin.isatty():
        console.print(
            "[bold red]aborted[/]: no terminal to confirm on; nothing was changed. "
            "Re-run with --yes to tear down without asking."
        )
        return False
    console.print("Proceed? [y/N] ", end="")
    answer = stdin.readline().strip().lower()
    if answer in ("y", "yes"):
        return True
    console.print("[bold]aborted[/]: nothing was changed")
    return False


def _print_plan(console: Console, plan: TeardownPlan, *, all_databases: bool) -> None:
    from rich.markup import escape

    console.print(f"[bold]teardown plan[/] for {escape(plan.database)}")
    if plan.postgres:
        roles = ", ".join(plan.roles_present) or "none present"
        console.print(
            f"  1. stop using the tools: NOLOGIN for {roles}; terminate {plan.sessions} session(s)"
        )
        console.print(
            f"  2. revoke and drop roles: REASSIGN OWNED, DROP OWNED, DROP ROLE ({roles})"
        )
        for name, holders in plan.other_databases.items():
            verb = (
                "will also be revoked" if all_databases else "BLOCKS the drop (see --all-databases)"
            )
            console.print(
                f"     database {escape(name)} holds grants of {', '.join(holders)}: {verb}"
            )
    else:
        console.print("  1–2. SQLite has no login roles: nothing to stop or drop")
    state = "exists" if plan.ledger_exists else "already absent"
    console.print(f"  3. drop the ledger: {escape(plan.ledger)} ({state})")
    console.print("  4. verify no tool role, grant or ledger remains")


def _print_step(console: Console, step: StepResult) -> None:
    from rich.markup import escape

    colour = {"done": "green", "skipped": "yellow", "failed": "red", "planned": "white"}[
        step.status
    ]
    console.print(f"[{colour}]{step.status.upper():7}[/] {step.step}. {escape(step.title)}")
    for line in step.details:
        console.print(f"          {escape(line)}")
