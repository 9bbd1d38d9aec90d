"""What each agent tool really uses: the per-tool expected-actions table.

Lab 87 gives each tool its own role. Anything a role can do beyond the actions in
this table is an unused grant, and an unused grant on a data store is the kind of
leftover that let the seed's read-only tool reach the payment gateway's secret.

The ledger needs three DynamoDB actions for every tool: the ``teto de voltas``
counter is one atomic ``UpdateItem``; the idempotency claim is a conditional
``PutItem``, read back with ``GetItem`` and completed with ``UpdateItem``.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.exceptions import ValidationError
from backend.posture.iam_model import Tool
from backend.tools.registry import TOOLS as TOOL_SPECS

GATEWAY_SECRET_NAME = "cadencia/gateway-pagamento"
LEDGER_ACTIONS = frozenset({"dynamodb:getitem", "dynamodb:putitem", "dynamodb:updateitem"})
# Lambda's own log writes; scoped to the function's log group in deploy/terraform.
RUNTIME_ACTIONS = frozenset({"logs:createlogstream", "logs:putlogevents"})


@dataclass(frozen=True)
class ToolGrants:
    """The grants one tool needs.

    Attributes:
        tool: the tool's name as the agent calls it.
        short: the word used in role, user and resource names (``consulta``...).
        db_user: the PostgreSQL login role the tool's IAM role may connect as.
        required: actions the tool cannot work without (lower-case).
        allowed: ``required`` plus actions it may use (log writes, KMS for its secret).
    """

    tool: Tool
    short: str
    db_user: str
    required: frozenset[str]
    allowed: frozenset[str]


def _grants(tool: Tool, short: str, extra: frozenset[str] = frozenset()) -> ToolGrants:
    required = LEDGER_ACTIONS | {"rds-db:connect"} | extra
    allowed = required | RUNTIME_ACTIONS
    if extra:
        # A secret under a customer-managed KMS key needs kms:Decrypt on that key.
        allowed = allowed | {"kms:decrypt"}
    return ToolGrants(tool, short, f"cadencia_agente_{short}", frozenset(required), allowed)


# Lab 87's least privilege, read off the tool registry: one role per tool, and a secret
# (with kms:Decrypt for it) only for a tool whose spec reads one.
TOOLS: dict[Tool, ToolGrants] = {
    spec.name: _grants(
        spec.name,
        spec.short,
        frozenset({"secretsmanager:getsecretvalue"}) if spec.secret else frozenset(),
    )
    for spec in TOOL_SPECS.values()
}
GATEWAY_SECRET_TOOLS: frozenset[Tool] = frozenset(
    spec.name for spec in TOOL_SPECS.values() if spec.secret == "gateway"
)
SHARED_ALLOWED = frozenset().union(*(g.allowed for g in TOOLS.values()))

_ALIASES: dict[str, Tool] = {}
for _grant in TOOLS.values():
    _ALIASES[_grant.tool] = _grant.tool
    _ALIASES[_grant.short] = _grant.tool
    _ALIASES[_grant.db_user] = _grant.tool
_TOKENS: dict[Tool, tuple[str, ...]] = {g.tool: (g.short,) for g in TOOLS.values()}


def parse_tool(name: str) -> Tool:
    """Accept a tool's full name or its short word (``consulta``, ``reembolso``, ``cadastro``).

    Raises:
        ValidationError: the name is not one of the three tools.
    """
    tool = _ALIASES.get(name.strip().lower())
    if tool is None:
        choices = ", ".join(sorted(_ALIASES))
        raise ValidationError(f"unknown tool {name!r}; expected one of: {choices}", tool=name)
    return tool


def tool_from_text(*texts: str | None) -> Tool | None:
    """Guess the tool from role names, tags or function names.

    Returns:
        The tool when the texts mention exactly one of the three; ``None`` when they
        mention none or several (a shared role).
    """
    found: set[Tool] = set()
    for text in texts:
        if not text:
            continue
        lowered = text.lower()
        for tool, tokens in _TOKENS.items():
            if any(token in lowered for token in tokens):
                found.add(tool)
    return found.pop() if len(found) == 1 else None


def allowed_actions(tool: Tool | None) -> frozenset[str]:
    """Actions the role may hold; an unknown role may serve any tool, so the union."""
    return TOOLS[tool].allowed if tool else SHARED_ALLOWED


def describe_tool(tool: Tool | None) -> str:
    """Human wording for messages."""
    return f"tool {tool}" if tool else "a role shared by all three tools"
