"""The project's own least-privilege invariants over IAM statements.

parliament knows IAM in general; these rules know Lab 87: which tool may connect as
which database user, that only the refund tool may read the gateway secret, and
that a grant a tool never uses is a liability, not a convenience.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatchcase
from functools import lru_cache

from backend.posture.iam_model import IamFinding, PolicySource, Statement
from backend.posture.iam_scope import confined
from backend.posture.iam_tools import (
    GATEWAY_SECRET_NAME,
    GATEWAY_SECRET_TOOLS,
    TOOLS,
    allowed_actions,
    describe_tool,
)

# Actions that read or write data or secrets: "*" as their Resource is never needed.
# DynamoDB's table listing and describing (List*, Describe*) read no item.
_DATA_PATTERNS = (
    "dynamodb:*item*",
    "dynamodb:query",
    "dynamodb:scan",
    "dynamodb:partiql*",
    "dynamodb:getrecords",
    "dynamodb:getsharditerator",
    "dynamodb:exporttable*",
    "dynamodb:restoretable*",
    "rds-db:*",
    "rds-data:*",
    "secretsmanager:*",
    "s3:*object*",
    "kms:decrypt",
    "kms:encrypt",
    "kms:generatedatakey*",
    "kms:reencrypt*",
    "ssm:getparameter*",
)
# Account-level calls that only accept "*" (no resource-level permissions exist).
_STAR_ONLY = frozenset(
    {
        "dynamodb:listtables",
        "dynamodb:describelimits",
        "dynamodb:describeendpoints",
        "secretsmanager:listsecrets",
        "secretsmanager:getrandompassword",
    }
)
_DBUSER_ARN = re.compile(
    r"^arn:(?P<partition>[^:]+):rds-db:(?P<region>[^:]+):(?P<account>[^:]+):"
    r"dbuser:(?P<resource_id>[^/]+)/(?P<user>.+)$"
)
_SECRET_ARN = re.compile(
    r"^arn:(?P<partition>[^:]+):secretsmanager:(?P<region>[^:]+):(?P<account>[^:]+):"
    r"secret:(?P<name>.+)$"
)
# Secrets Manager appends "-" + 6 random characters to every secret ARN; matching
# exactly that suffix with "-??????" is the documented way to name one secret.
_SECRET_SUFFIX = "-??????"


@lru_cache(maxsize=1024)
def expand(action: str) -> frozenset[str]:
    """Expand an action pattern to the known actions it grants (``service:Action``).

    Unknown services or actions expand to nothing; parliament reports those.
    """
    from parliament import UnknownActionException, UnknownPrefixException, expand_action

    try:
        found = expand_action(action)
    except (UnknownActionException, UnknownPrefixException, ValueError):
        # ValueError: not "service:action" at all; parliament reports it as malformed.
        return frozenset()
    return frozenset(f"{a['service']}:{a['action']}" for a in found)


def _lower(actions: frozenset[str]) -> frozenset[str]:
    return frozenset(a.lower() for a in actions)


def _is_wildcard(text: str) -> bool:
    return "*" in text or "?" in text


@lru_cache(maxsize=32768)  # Action "*" asks for all ~18,000 actions, per statement
def is_data_action(action: str) -> bool:
    """Whether ``action`` (``service:Action``) reads or writes data or secrets."""
    action = action.lower()
    return action not in _STAR_ONLY and any(fnmatchcase(action, p) for p in _DATA_PATTERNS)


def _finding(source: PolicySource, stmt: Statement, rule: str, message: str) -> IamFinding:
    return IamFinding(
        file=source.file,
        policy=source.name,
        role=source.role,
        tool=source.tool,
        statement=stmt.label,
        rule=rule,
        severity="error",
        message=message,
    )


def check_statement(
    source: PolicySource, stmt: Statement, *, lab_rules: bool = True
) -> list[IamFinding]:
    """Apply the statement-level rules to one ``Allow`` statement.

    ``lab_rules=False`` leaves out ``unused_grant`` (which needs the role to be one of
    Lab 87's tools): the gate judges IAM of any repository with the general rules.
    """
    if stmt.effect != "Allow":
        return []
    out: list[IamFinding] = []
    if stmt.not_actions or stmt.not_resources:
        element = "NotAction" if stmt.not_actions else "NotResource"
        out.append(
            _finding(
                source,
                stmt,
                "not_element_allow",
                f"Allow with {element} grants everything except a list: name what is "
                "allowed instead",
            )
        )
    granted = frozenset().union(*(expand(a) for a in stmt.actions))
    out += _wildcard_actions(source, stmt)
    out += _resource_star(source, stmt, granted)
    out += _rds_db(source, stmt, granted)
    out += _secret_arns(source, stmt, granted)
    if lab_rules or not confined(stmt.condition, data=True):
        # Only Lab 87 knows the gateway secret may carry the tag a Condition names.
        out += _gateway_secret(source, stmt, granted)
    if lab_rules:
        out += _unused(source, stmt)
    return out


def _wildcard_actions(source: PolicySource, stmt: Statement) -> list[IamFinding]:
    out = []
    for action in stmt.actions:
        if action == "*" or action.endswith(":*"):
            service = "every service" if action == "*" else action.split(":")[0]
            out.append(
                _finding(
                    source,
                    stmt,
                    "wildcard_action",
                    f'action "{action}" grants every action of {service} '
                    f"({len(expand(action))} actions); list the exact actions the tool calls",
                )
            )
    return out


def _resource_star(
    source: PolicySource, stmt: Statement, granted: frozenset[str]
) -> list[IamFinding]:
    if "*" not in stmt.resources or confined(stmt.condition, data=True):
        return []
    # rds-db and secretsmanager get their own, more specific findings below.
    data = sorted(
        a for a in granted if is_data_action(a) and not a.startswith(("rds-db:", "secretsmanager:"))
    )
    if not data:
        return []
    services = sorted({a.split(":")[0] for a in data})
    return [
        _finding(
            source,
            stmt,
            "resource_star",
            f'Resource "*" on data actions of {", ".join(services)} ({len(data)} actions, '
            f"e.g. {', '.join(data[:3])}) reaches every table/object in the account; "
            "name the ledger table's ARN",
        )
    ]


def _rds_db(source: PolicySource, stmt: Statement, granted: frozenset[str]) -> list[IamFinding]:
    if "rds-db:connect" not in _lower(granted):
        return []
    out = []
    tool = TOOLS[source.tool] if source.tool else None
    for resource in stmt.resources:
        if resource == "*":
            out.append(
                _finding(
                    source,
                    stmt,
                    "rds_db_any_user",
                    'rds-db:connect on Resource "*" lets the role log in as ANY database '
                    "user, including a user with write privileges the tool must never reach; "
                    "use arn:aws:rds-db:REGION:ACCOUNT:dbuser:CLUSTER_RESOURCE_ID/"
                    f"{tool.db_user if tool else 'cadencia_agente_<tool>'}",
                )
            )
            continue
        match = _DBUSER_ARN.match(resource)
        if match is None:
            if not resource.startswith("arn:") or ":rds-db:" in resource or ":rds:" in resource:
                out.append(
                    _finding(
                        source,
                        stmt,
                        "rds_db_arn_format",
                        f"rds-db:connect resource {resource!r} is not a dbuser ARN: it must be "
                        "arn:aws:rds-db:REGION:ACCOUNT:dbuser:CLUSTER_RESOURCE_ID/DB_USER "
                        "(the cluster resource id, not the cluster ARN); as written it "
                        "matches no database user",
                    )
                )
            continue
        if _is_wildcard(match["resource_id"]) or _is_wildcard(match["user"]):
            out.append(
                _finding(
                    source,
                    stmt,
                    "rds_db_any_user",
                    f"rds-db:connect resource {resource!r} has a wildcard in the db user part: "
                    "the role may log in as any matching database user, not only its own",
                )
            )
        elif tool and match["user"] != tool.db_user:
            out.append(
                _finding(
                    source,
                    stmt,
                    "wrong_db_user",
                    f"{describe_tool(source.tool)} connects as database user "
                    f"{match['user']!r}; its own user is {tool.db_user!r}",
                )
            )
    return out


def _secret_arns(
    source: PolicySource, stmt: Statement, granted: frozenset[str]
) -> list[IamFinding]:
    secret_actions = sorted(
        a for a in granted if a.startswith("secretsmanager:") and a.lower() not in _STAR_ONLY
    )
    if not secret_actions:
        return []
    out = []
    for resource in stmt.resources:
        if resource == "*":
            if confined(stmt.condition, data=True):
                continue  # e.g. secretsmanager:ResourceTag/team = ${aws:PrincipalTag/team}
            out.append(
                _finding(
                    source,
                    stmt,
                    "secret_wildcard",
                    f'{", ".join(secret_actions[:3])} on Resource "*" reads EVERY secret in '
                    "the account, the payment gateway's included; name the one secret ARN",
                )
            )
            continue
        match = _SECRET_ARN.match(resource)
        name = match["name"] if match else resource
        name = name.removesuffix(_SECRET_SUFFIX)
        if _is_wildcard(name):
            out.append(
                _finding(
                    source,
                    stmt,
                    "secret_wildcard",
                    f"secret ARN {resource!r} has a wildcard in the secret name: it matches "
                    "more secrets than the tool reads",
                )
            )
    return out


def _may_match_gateway(resource: str) -> bool:
    if resource == "*" or GATEWAY_SECRET_NAME in resource:
        return True
    match = _SECRET_ARN.match(resource)
    if match is None:
        return False
    candidate = f"{GATEWAY_SECRET_NAME}-AbCdEf"
    return fnmatchcase(candidate, match["name"].replace("[", "[[]"))


def _gateway_secret(
    source: PolicySource, stmt: Statement, granted: frozenset[str]
) -> list[IamFinding]:
    if source.tool in GATEWAY_SECRET_TOOLS or "secretsmanager:getsecretvalue" not in _lower(
        granted
    ):
        return []
    reaching = [r for r in stmt.resources if _may_match_gateway(r)]
    if not reaching:
        return []
    who = (
        f"role {source.role!r} ({describe_tool(source.tool)})"
        if source.role
        else (describe_tool(source.tool))
    )
    if source.tool is None:
        others = " and ".join(t for t in TOOLS if t not in GATEWAY_SECRET_TOOLS)
        who += f", so {others} too,"
    return [
        _finding(
            source,
            stmt,
            "gateway_secret_reach",
            f"{who} can read the payment gateway secret {GATEWAY_SECRET_NAME} "
            f"(via Resource {', '.join(map(repr, reaching))}); only emitir-reembolso's role may",
        )
    ]


def _unused(source: PolicySource, stmt: Statement) -> list[IamFinding]:
    allowed = allowed_actions(source.tool)
    out = []
    for action in stmt.actions:
        expanded = expand(action)
        extra = sorted(a for a in expanded if a.lower() not in allowed)
        if not extra:
            continue
        used = sorted(a for a in expanded if a.lower() in allowed)
        if used:
            message = (
                f'"{action}" grants {len(expanded)} actions but {describe_tool(source.tool)} '
                f"uses only {', '.join(used)}; {len(extra)} are unused grants "
                f"(e.g. {', '.join(extra[:4])})"
            )
        else:
            message = f'"{action}" is never used by {describe_tool(source.tool)}: remove it'
        out.append(_finding(source, stmt, "unused_grant", message))
    return out


def check_role(file: str, role: str, sources: Iterable[PolicySource]) -> list[IamFinding]:
    """Role-wide rule: a known tool's role must hold every action the tool needs.

    Only meaningful when all of the role's policies are visible (a Terraform
    directory); a missing ``dynamodb:UpdateItem`` breaks the ``teto de voltas`` counter.
    """
    sources = list(sources)
    tool = sources[0].tool if sources else None
    if tool is None:
        return []
    granted: set[str] = set()
    for source in sources:
        for stmt in source.statements():
            if stmt.effect == "Allow":
                for action in stmt.actions:
                    granted |= _lower(expand(action))
    missing = sorted(next(iter(expand(a)), a) for a in TOOLS[tool].required - granted)
    if not missing:
        return []
    return [
        IamFinding(
            file=file,
            policy=", ".join(s.name for s in sources),
            role=role,
            tool=tool,
            statement="(role)",
            rule="missing_action",
            severity="error",
            message=f"role {role!r} ({tool}) lacks {', '.join(missing)}, which the tool needs"
            + (
                " (UpdateItem is the teto de voltas counter's atomic increment)"
                if "dynamodb:UpdateItem" in missing
                else ""
            ),
        )
    ]
