"""decide(): IAM -> agent_autonomy -> permissions.json, raise-only, deny short-circuits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from backend.agents.policy import (
    ACTION_TYPES,
    DEFAULTS,
    decide,
    infra_handoff_autonomy,
    parse_permissions,
)
from backend.exceptions import ValidationError

BROAD_ALLOW = {"rules": [{"agent": "*", "action": "*", "outcome": "allow"}]}


class Loader:
    """A permissions.json loader that records whether it was consulted."""

    def __init__(self, data: Any) -> None:
        self.data = data
        self.calls = 0

    def __call__(self) -> Any:
        self.calls += 1
        return self.data


def test_deny_in_autonomy_never_consults_permissions_even_with_a_broad_allow() -> None:
    loader = Loader(BROAD_ALLOW)
    decision = decide("infra", "terminal", autonomy=infra_handoff_autonomy(), permissions=loader)
    assert (decision.outcome, decision.stage) == ("deny", "agent_autonomy")
    assert decision.rule == "agent_autonomy (infra, terminal) = deny"
    assert loader.calls == 0


def test_deny_at_iam_never_consults_autonomy_or_permissions() -> None:
    loader = Loader(BROAD_ALLOW)
    decision = decide(
        "infra",
        "open_infra_pr",
        iam={("infra", "*"): "deny"},
        autonomy=infra_handoff_autonomy(),
        permissions=loader,
    )
    assert (decision.outcome, decision.stage, decision.rule) == (
        "deny",
        "iam",
        "iam (infra, *) = deny",
    )
    assert loader.calls == 0


def test_the_same_broad_allow_does_raise_terminal_when_nothing_denies() -> None:
    """Guard for the test above: the loader is consulted when the chain reaches it."""
    loader = Loader(BROAD_ALLOW)
    decision = decide("dev-api", "terminal", permissions=loader)
    assert (decision.outcome, decision.stage) == ("allow", "permissions")
    assert loader.calls == 1


@pytest.mark.parametrize(
    ("action", "outcome"),
    [
        ("open_adr_pr", "ask"),
        ("open_infra_pr", "ask"),
        ("terminal", "deny"),
        ("propose_task_pr", "allow"),
        ("merge_pr", "deny"),
        ("tool_call", "allow"),
    ],
)
def test_defaults(action: str, outcome: str) -> None:
    decision = decide("po", action)
    assert (decision.outcome, decision.stage) == (outcome, "default")
    assert decision.needs_approval is (outcome == "ask")


def test_every_action_type_has_a_default() -> None:
    assert set(DEFAULTS) == set(ACTION_TYPES)


def test_unknown_action_is_denied() -> None:
    decision = decide("po", "rm_rf")
    assert (decision.outcome, decision.stage) == ("deny", "default")
    assert "unknown action" in decision.rule


def test_handoff_autonomy_auto_approves_the_infra_pr() -> None:
    decision = decide("infra", "open_infra_pr", autonomy=infra_handoff_autonomy())
    assert decision.to_dict() == {
        "outcome": "allow",
        "stage": "agent_autonomy",
        "rule": "agent_autonomy (infra, open_infra_pr) = auto_approve",
    }
    # Other agents keep the maintainer default.
    assert decide("arquiteto", "open_infra_pr", autonomy=infra_handoff_autonomy()).outcome == "ask"


def test_each_stage_can_raise() -> None:
    assert decide("qa", "terminal", iam={("qa", "terminal"): "ask"}).to_dict() == {
        "outcome": "ask",
        "stage": "iam",
        "rule": "iam (qa, terminal) = ask",
    }
    raised = decide("po", "open_adr_pr", autonomy={("po", "open_adr_pr"): "auto_approve"})
    assert (raised.outcome, raised.stage) == ("allow", "agent_autonomy")
    by_file = decide(
        "arquiteto",
        "open_adr_pr",
        iam={("*", "*"): "ask"},
        autonomy={("arquiteto", "open_adr_pr"): "pending"},
        permissions={
            "rules": [{"agent": "arquiteto", "action": "open_adr_pr", "outcome": "allow"}]
        },
    )
    assert (by_file.outcome, by_file.stage) == ("allow", "permissions")
    assert by_file.rule == "permissions.json rules[0]: (arquiteto, open_adr_pr) = allow"


def test_a_later_stage_cannot_lower_the_outcome() -> None:
    decision = decide(
        "po",
        "open_adr_pr",
        autonomy={("po", "open_adr_pr"): "auto_approve"},
        permissions={"rules": [{"agent": "po", "action": "open_adr_pr", "outcome": "ask"}]},
    )
    assert (decision.outcome, decision.stage) == ("allow", "agent_autonomy")


def test_a_deny_in_permissions_is_still_a_deny() -> None:
    decision = decide(
        "dev-api",
        "propose_task_pr",
        permissions={"rules": [{"agent": "dev-*", "action": "propose_task_pr", "outcome": "deny"}]},
    )
    assert (decision.outcome, decision.stage) == ("deny", "permissions")


def test_wildcard_prefix_and_deny_wins_within_a_stage() -> None:
    rules = {
        "rules": [
            {"agent": "dev-*", "action": "terminal", "outcome": "allow"},
            {"agent": "dev-web", "action": "terminal", "outcome": "deny", "reason": "no shell"},
        ]
    }
    assert decide("dev-api", "terminal", permissions=rules).outcome == "allow"
    web = decide("dev-web", "terminal", permissions=rules)
    assert (web.outcome, web.rule) == (
        "deny",
        "permissions.json rules[1]: (dev-web, terminal) = deny (no shell)",
    )
    assert decide("qa", "terminal", permissions=rules).stage == "default"


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("{not json", "not valid JSON"),
        ('{"rules": {"agent": "*"}}', "rules"),
        ('{"rules": [{"agent": "*", "action": "*", "outcome": "yes"}]}', "rules.0.outcome"),
        ('{"rules": [{"agent": 7, "outcome": "allow"}]}', "rules.0.agent"),
        ('{"rules": [{"action": "terminl", "outcome": "allow"}]}', "unknown action"),
        ('{"rules": [], "extra": true}', "extra"),
        ("[]", "(root)"),
    ],
)
def test_malformed_permissions_fail_closed(tmp_path: Path, content: str, why: str) -> None:
    path = tmp_path / "permissions.json"
    path.write_text(content, encoding="utf-8")
    # tool_call is allowed by default: only the broken file can turn it into a deny.
    decision = decide("po", "tool_call", permissions=path)
    assert (decision.outcome, decision.stage) == ("deny", "permissions")
    assert "failing closed" in decision.rule
    assert why in decision.rule


def test_a_loader_that_raises_fails_closed() -> None:
    def broken() -> Any:
        raise OSError("disk on fire")

    decision = decide("po", "tool_call", permissions=broken)
    assert (decision.outcome, decision.stage) == ("deny", "permissions")
    assert "disk on fire" in decision.rule


def test_a_missing_permissions_file_means_no_rules(tmp_path: Path) -> None:
    decision = decide("po", "tool_call", permissions=tmp_path / "absent.json")
    assert (decision.outcome, decision.stage) == ("allow", "default")


def test_a_valid_file_on_disk_is_read(tmp_path: Path) -> None:
    path = tmp_path / "permissions.json"
    path.write_text(json.dumps(BROAD_ALLOW), encoding="utf-8")
    assert decide("po", "open_adr_pr", permissions=path).stage == "permissions"


def test_invalid_autonomy_value_denies() -> None:
    decision = decide("infra", "open_infra_pr", autonomy={("infra", "open_infra_pr"): "yolo"})
    assert (decision.outcome, decision.stage) == ("deny", "agent_autonomy")


def test_parse_permissions_raises_the_backend_validation_error() -> None:
    with pytest.raises(ValidationError, match="outcome"):
        parse_permissions({"rules": [{"outcome": "maybe"}]})
    assert parse_permissions(json.dumps(BROAD_ALLOW)).rules[0].outcome == "allow"
