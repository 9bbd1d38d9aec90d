"""Whether a grant on ``Resource "*"`` is confined, and which findings that quiets.

A ``Resource "*"`` is not over-broad when a Condition confines it (a resource tag, the
resource's account, an ``s3:prefix``, ``iam:PassedToService``, ``iam:PolicyARN``; for
actions that read no data, also the region or VPC endpoint), when the actions are
metadata reads (List, or Read outside the data stores), or when the statement is a Deny.
:func:`quiet_reason` applies that to parliament's findings; the rules in
:mod:`backend.posture.iam_rules` ask :func:`confined` directly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from fnmatch import fnmatchcase
from typing import Any

# Condition keys that confine WHICH resources a grant reaches.
_RESOURCE_KEYS = (
    "aws:resourcetag/*",
    "*:resourcetag/*",
    "rds:*-tag/*",
    "aws:resourceaccount",
    "s3:resourceaccount",
    "aws:resourceorgid",
    "aws:resourceorgpaths",
    "s3:prefix",
    "iam:passedtoservice",
    "iam:policyarn",
    "iam:permissionsboundary",
)
# Keys that confine where a request may come from or go to: enough for actions that
# read no data, not for a read of every table or secret of a region.
_CONTEXT_KEYS = ("aws:requestedregion", "ec2:region", "aws:sourcevpce", "aws:sourcevpc")
# Policy writes escalate even on one's own user: only a list of policies confines them.
_POLICY_WRITES = (
    "iam:attach*policy",
    "iam:put*policy",
    "iam:createpolicyversion",
    "iam:setdefaultpolicyversion",
    "iam:updateassumerolepolicy",
    "iam:addusertogroup",
)
_POLICY_KEYS = ("iam:policyarn", "iam:permissionsboundary")
# Resources that hold no permission: a virtual MFA device (AWS's own self-service policy
# grants iam:CreateVirtualMFADevice on "arn:aws:iam::*:mfa/*").
_HOLD_NO_PERMISSION = ("arn:*:iam::*:mfa/*",)
# Tokens whose use IAM still authorizes repository by repository.
_REGISTRY_TOKENS = frozenset({"ecr:getauthorizationtoken", "ecr-public:getauthorizationtoken"})
_STATEMENT_ISSUES = frozenset({"RESOURCE_STAR", "RESOURCE_EFFECTIVELY_STAR"})
_POLICY_ISSUES = frozenset(
    {"PERMISSIONS_MANAGEMENT_ACTIONS", "CREDENTIALS_EXPOSURE", "PRIVILEGE_ESCALATION"}
)


def _confining_operator(operator: str) -> bool:
    """A positive test that fails when the key is absent (no ``IfExists``, no negation)."""
    op = operator.lower()
    if op.startswith("forallvalues:") or op.endswith("ifexists") or op == "null":
        return False
    op = op.removeprefix("foranyvalue:")
    return op.startswith(("stringequals", "stringlike", "arnequals", "arnlike", "bool"))


def _specific(values: object) -> bool:
    items = values if isinstance(values, list) else [values]
    return bool(items) and all(
        isinstance(v, str | bool) and str(v).strip("*?") != "" for v in items
    )


def confining_keys(condition: object) -> set[str]:
    """The lower-case condition keys that positively confine a statement."""
    keys: set[str] = set()
    if not isinstance(condition, Mapping):
        return keys
    for operator, block in condition.items():
        if not isinstance(block, Mapping) or not _confining_operator(str(operator)):
            continue
        keys |= {str(k).lower() for k, v in block.items() if _specific(v)}
    return keys


def confined(condition: object, *, data: bool) -> bool:
    """Whether ``condition`` confines a ``Resource "*"`` grant.

    Args:
        condition: the statement's ``Condition`` element (anything, as written).
        data: the grant reads or writes data (tables, objects, secrets): then only
            keys that name resources count, not the region or the VPC endpoint.
    """
    keys = confining_keys(condition)
    patterns = _RESOURCE_KEYS if data else _RESOURCE_KEYS + _CONTEXT_KEYS
    return any(fnmatchcase(k, p) for k in keys for p in patterns)


def scoped_resource(resource: str) -> bool:
    """A resource naming something specific: not ``*`` nor ``arn:...:type/*``."""
    parts = resource.split(":", 5)
    if len(parts) < 6:
        return False
    name = parts[5]
    # Every ARN but S3's starts its name with a resource type ("role/", "secret:").
    for sep in ("/", ":") if parts[2] != "s3" else ():
        if sep in name:
            name = name.split(sep, 1)[1]
            break
    return name.strip("*?/:") != ""


def metadata_only(actions: Iterable[str], is_data: Callable[[str], bool]) -> bool:
    """Every action is a List, or a Read outside the data stores (``is_data`` says)."""
    import parliament.statement as statement_module

    for action in actions:
        service, _, name = action.partition(":")
        try:
            level = statement_module.get_privilege_info(service, name)["access_level"]
        except Exception:  # unknown to parliament: not shown to be a read
            return False
        if level == "List" or (level == "Read" and not is_data(action)):
            continue
        return False
    return True


def _grants(stmt: Mapping[str, Any], action: str) -> bool:
    patterns = stmt.get("Action", stmt.get("NotAction"))
    items = [patterns] if isinstance(patterns, str) else list(patterns or [])
    hit = any(fnmatchcase(action, str(p).lower()) for p in items)
    return hit if "Action" in stmt else not hit


def _scoped_for(stmt: Mapping[str, Any], action: str, issue: str) -> bool:
    if "NotAction" in stmt or "NotResource" in stmt:
        return False
    keys = confining_keys(stmt.get("Condition"))
    if any(fnmatchcase(action, p) for p in _POLICY_WRITES):
        return any(k in _POLICY_KEYS for k in keys)
    resources = stmt.get("Resource")
    items = [resources] if isinstance(resources, str) else list(resources or [])
    if items and all(
        isinstance(r, str)
        and (scoped_resource(r) or any(fnmatchcase(r, p) for p in _HOLD_NO_PERMISSION))
        for r in items
    ):
        return True
    # A condition naming resources narrows them; it does not stop an escalation path, and
    # a region or an endpoint leaves every policy of that region to rewrite.
    return issue != "PRIVILEGE_ESCALATION" and confined(stmt.get("Condition"), data=True)


def _whole_service(stmt: Mapping[str, Any], detail: Any) -> bool:
    """``s3:ListAllMyBuckets`` on ``arn:aws:s3:::*`` (AWS's and Terraform's own example):
    parliament wants the literal ``"*"``; a wildcard over the whole service is the same."""
    items = detail if isinstance(detail, list) else []
    if not items or any(
        not isinstance(i, Mapping) or i.get("required_format") != "*" for i in items
    ):
        return False
    resources = stmt.get("Resource")
    names = [resources] if isinstance(resources, str) else list(resources or [])
    return bool(names) and all(
        isinstance(r, str) and len(parts := r.split(":", 5)) == 6 and parts[5].strip("*") == ""
        for r in names
    )


def _statements(document: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    raw = document.get("Statement")
    items = [raw] if isinstance(raw, Mapping) else raw if isinstance(raw, list) else []
    return [s for s in items if isinstance(s, Mapping)]


def quiet_reason(
    issue: str,
    document: Mapping[str, Any] | None,
    statement: int | None,
    actions: Iterable[str],
    is_data: Callable[[str], bool],
    detail: Any = None,
) -> str | None:
    """Why a parliament finding is not a least-privilege problem, or ``None``.

    Args:
        issue: parliament's issue id.
        document: the policy parliament read (``None`` when it could not be parsed).
        statement: the index of the statement the finding is on, if it is on one.
        actions: the actions the finding names.
        is_data: ``action -> bool``, whether an action reads or writes data.
        detail: parliament's detail (``RESOURCE_MISMATCH``: each action's required format).
    """
    if document is None:
        return None
    statements = _statements(document)
    named = [str(a) for a in actions]  # parliament's spelling, for its lookups
    actions = [a.lower() for a in named]
    stmt = statements[statement] if statement is not None and statement < len(statements) else None
    if issue == "UNKNOWN_CONDITION_FOR_ACTION" and stmt is not None:
        if stmt.get("Effect") == "Allow":
            return "a condition key that never applies makes an Allow grant less, not more"
        return None
    if issue == "RESOURCE_MISMATCH" and stmt is not None and _whole_service(stmt, detail):
        return 'the action takes only "*" and the resource is every resource of the service'
    if issue in _STATEMENT_ISSUES and stmt is not None:
        data = any(is_data(a) for a in actions)
        if confined(stmt.get("Condition"), data=data):
            return "the Condition confines the resources"
        if named and metadata_only(named, is_data):
            return "metadata reads (List/Read of no data) on every resource"
        return None
    if issue in _POLICY_ISSUES and actions:
        left = [
            a for a in actions if not (issue == "CREDENTIALS_EXPOSURE" and a in _REGISTRY_TOKENS)
        ]
        allows = [s for s in statements if s.get("Effect") == "Allow"]
        granting = [[s for s in allows if _grants(s, a)] for a in left]
        if all(granting) and all(
            _scoped_for(s, a, issue) for a, found in zip(left, granting, strict=True) for s in found
        ):
            return "every grant of these actions is scoped to named resources or confined"
    return None
