"""Separation of duties counts people, over the real API with real tokens (SQLite and
PostgreSQL): the bootstrap token cannot act as an operator account, and an infra PR needing
two approvals merges only on two authenticated principals' approvals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from backend.prs.actions import PrPipeline
from tests.integration.api.conftest import Live, live_backend, live_settings
from tests.integration.api.test_inbox import _to_awaiting_human
from tests.integration.api.test_waivers import _open_pr


@pytest.fixture(params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Live]:
    yield from live_backend(live_settings(request, tmp_path, required_approvals={"infra": 2}))


def _infra_pr(live: Live) -> tuple[PrPipeline, str]:
    """An infra PR on a real git branch, through its gates to ``awaiting_human``."""
    manual = PrPipeline(live.backend.store, live.backend.settings)
    pr_id = _open_pr(live, {"compose.yaml": "services: {}\n"}, "act_sod")
    _to_awaiting_human(manual, pr_id)
    return manual, pr_id


def _merged_events(live: Live) -> list[dict[str, Any]]:
    events = live.http.get("/api/events", params={"limit": 1000}).json()
    return [e["payload"] for e in events if e["type"] == "infra.pr_merged"]


def test_the_bootstrap_token_alone_never_merges_a_two_person_pr(live: Live) -> None:
    backend = live.backend
    _, ana = backend.operators.add("ana", "operator")
    backend.operators.add("bob", "operator")
    backend.operators.revoke("bob")
    manual, pr_id = _infra_pr(live)
    approve = f"/api/prs/{pr_id}/approve"

    # The bootstrap token in an account's name, live or revoked: refused, nothing counted.
    for name in ("ana", "bob"):
        refused = live.http.post(approve, json={"operator": name, "reason": "lgtm"})
        assert refused.status_code == 403, refused.text
        assert refused.json()["error"]["code"] == "forbidden"
        assert f"cannot act as {name}" in refused.json()["error"]["message"]
    assert manual.approval_count(manual.get(pr_id)).approvers == ()

    # In names that are nobody's account it is still one person: the second is 409.
    first = live.http.post(approve, json={"operator": "zed"})
    assert first.status_code == 200, first.text
    assert first.json()["gate_status"] == "awaiting_human"
    again = live.http.post(approve, json={"operator": "yan"})
    assert again.status_code == 409, again.text
    assert manual.get(pr_id).gate_status == "awaiting_human"
    assert manual.approval_count(manual.get(pr_id)).approvers == ("admin",)
    assert _merged_events(live) == []

    # A second person, with their own token (the body's name is not theirs: ignored).
    with httpx.Client(
        base_url=live.url, headers={"Authorization": f"Bearer {ana}"}, timeout=30
    ) as a:
        merged = a.post(approve, json={"operator": "bob"})
    assert merged.status_code == 200, merged.text
    assert merged.json()["gate_status"] == "merged"
    assert manual.approval_count(manual.get(pr_id)).approvers == ("admin", "ana")
    assert _merged_events(live) == [{"pr_action_id": pr_id, "operator": "ana"}]
    timeline = live.http.get(f"/api/prs/{pr_id}").json()["timeline"]
    assert [t["actor"] for t in timeline[-2:]] == ["admin", "ana"]
    assert "admin (as zed)" in timeline[-2]["note"]

    audit = live.http.get("/api/audit", params={"operator": "admin", "limit": 1000}).json()
    tried = [(e["as_operator"], e["status"]) for e in audit if e["action"] == "approve"]
    assert tried == [("ana", 403), ("bob", 403), ("zed", 200), ("yan", 409)]
