"""Constant-time lookups for parliament's two linear scans.

parliament answers ``expand_action`` and ``get_privilege_info`` by walking every privilege
of every service, and ``"Action": "*"`` asks that once per action: seconds per policy.
:func:`install` puts an index built once from parliament's own ``iam_definition`` in
front of both. Only exact names take the index; patterns and unknown names go to
parliament's code, so results and exceptions stay parliament's. Figures:
docs/decisions/0008-parliament-lookup-index.md.
"""

from __future__ import annotations

from typing import Any

_installed = False


def install() -> None:
    """Patch parliament's modules in this interpreter (idempotent)."""
    global _installed
    if _installed:
        return
    import parliament
    import parliament.community_auditors.sensitive_access as sensitive_access
    import parliament.policy as policy_module
    import parliament.statement as statement_module

    actions: dict[tuple[str, str], list[dict[str, str]]] = {}
    privileges: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]] = {}
    for service in parliament.iam_definition:
        for privilege in service["privileges"]:
            key = (service["prefix"], privilege["privilege"].lower())
            actions.setdefault(key, []).append(
                {"service": service["prefix"], "action": privilege["privilege"]}
            )
            privileges.setdefault((service["prefix"], privilege["privilege"]), (service, privilege))

    original_expand = parliament.expand_action
    original_info = statement_module.get_privilege_info

    def expand_action(action: str, raise_exceptions: bool = True) -> list[dict[str, str]]:
        prefix, sep, name = action.partition(":")
        if sep and not any(c in action for c in "*?["):
            found = actions.get((prefix.lower(), name.lower()))
            if found:
                # parliament returns fresh dicts; callers may keep them.
                return [dict(item) for item in found]
        result: list[dict[str, str]] = original_expand(action, raise_exceptions)
        return result

    def get_privilege_info(service: str, action: str) -> dict[str, Any]:
        hit = privileges.get((service, action))
        if hit is None:
            info: dict[str, Any] = original_info(service, action)
            return info
        service_info, privilege_info = hit
        privilege_info["service_resources"] = service_info["resources"]
        privilege_info["service_conditions"] = service_info["conditions"]
        return privilege_info

    original_allowed = policy_module.Policy.get_allowed_actions

    def get_allowed_actions(self: Any, raise_exceptions: bool = True) -> list[str]:
        # Four auditors ask for it per policy; the statements do not change meanwhile.
        memo = self.__dict__.setdefault("_cadencia_allowed", {})
        if raise_exceptions not in memo:
            memo[raise_exceptions] = original_allowed(self, raise_exceptions)
        return list(memo[raise_exceptions])

    original_sensitive = sensitive_access.audit

    def sensitive_audit(policy: Any) -> None:
        # The auditor computes resources for every allowed action but only ever looks
        # at the few actions of its SENSITIVE_ACCESS list: hand it only those.
        try:
            listed = policy.config["SENSITIVE_ACCESS"]["resources"]
        except KeyError:
            listed = []
        wanted = {sensitive_access._expand_action(next(iter(item))).lower() for item in listed}
        original_sensitive(_OnlyActions(policy, wanted))

    policy_module.Policy.get_allowed_actions = get_allowed_actions  # type: ignore[method-assign]
    sensitive_access.audit = sensitive_audit
    for module in (parliament, policy_module, statement_module, sensitive_access):
        if hasattr(module, "expand_action"):
            module.expand_action = expand_action  # type: ignore[attr-defined]
    statement_module.get_privilege_info = get_privilege_info  # type: ignore[attr-defined]
    _installed = True


class _OnlyActions:
    """A parliament ``Policy`` whose ``get_allowed_actions`` keeps only ``wanted``."""

    def __init__(self, policy: Any, wanted: set[str]) -> None:
        self._policy = policy
        self._wanted = wanted

    def get_allowed_actions(self, raise_exceptions: bool = True) -> list[str]:
        allowed: list[str] = self._policy.get_allowed_actions(raise_exceptions)
        return [a for a in allowed if a.lower() in self._wanted]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._policy, name)
