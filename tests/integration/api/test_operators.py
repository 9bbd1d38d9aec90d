"""Operators with names and roles over the real API (loopback uvicorn, real git), SQLite and
PostgreSQL: the token names who acts, the server enforces roles, every action (refused ones
too) is in ``GET /api/audit``, and a PR kind needing two approvals merges only after two
different operators."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from backend.cli import main
from backend.prs.actions import PrPipeline
from backend.settings import load_settings
from tests.integration.api.conftest import Live, live_backend, live_settings
from tests.integration.api.test_inbox import _dev_pr, _project, _to_awaiting_human


@pytest.fixture(params=["sqlite", "postgres"])
def live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Live]:
    yield from live_backend(live_settings(request, tmp_path, required_approvals={"dev": 2}))


def _as(live: Live, token: str) -> httpx.Client:
    return httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {token}"}, timeout=30)


def _audit(live: Live, **params: Any) -> list[dict[str, Any]]:
    got = live.http.get("/api/audit", params=params)
    assert got.status_code == 200, got.text
    return list(got.json())


def test_roles_audit_and_two_approvals_by_two_operators(live: Live) -> None:
    backend = live.backend
    _, viewer = backend.operators.add("vera", "viewer")
    _, ana = backend.operators.add("ana", "operator")
    _, bruno = backend.operators.add("bruno", "operator")
    manual = PrPipeline(backend.store, backend.settings)
    project = _project(live, "loja")
    pr_id = _dev_pr(live, manual, project["id"], "Document the API", "# loja\n")
    _to_awaiting_human(manual, pr_id)
    approve = f"/api/prs/{pr_id}/approve"

    with _as(live, viewer) as v, _as(live, ana) as a, _as(live, bruno) as b:
        assert v.get("/api/me").json() == {"name": "vera", "role": "viewer", "bootstrap": False}
        assert v.get(f"/api/prs/{pr_id}").status_code == 200  # a viewer reads
        refused = v.post(approve, json={"operator": "ana", "reason": "lgtm"})
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "forbidden"
        assert manual.get(pr_id).gate_status == "awaiting_human"
        assert manual.approval_count(manual.get(pr_id)).approvers == ()

        # The body names bruno; the token is ana's: ana's approval is what counts.
        first = a.post(approve, json={"operator": "bruno", "reason": "reviewed"})
        assert first.status_code == 200, first.text
        assert first.json()["gate_status"] == "awaiting_human"  # 1 of 2
        assert manual.approval_count(manual.get(pr_id)).approvers == ("ana",)
        item = next(i for i in live.http.get("/api/inbox").json() if i["target_id"] == pr_id)
        assert item["detail"].startswith("1 of 2 approvals (ana)")
        again = a.post(approve, json={})
        assert again.status_code == 409  # one operator counts once
        # The bootstrap admin acting in the PR author's name: the author never approves.
        own = live.http.post(approve, json={"operator": "dev-api"})
        assert own.status_code == 403, own.text
        assert manual.get(pr_id).gate_status == "awaiting_human"

        second = b.post(approve, json={"reason": "second pair of eyes"})
        assert second.status_code == 200, second.text
        assert second.json()["gate_status"] == "merged"
        timeline = live.http.get(f"/api/prs/{pr_id}").json()["timeline"]
        assert [t["actor"] for t in timeline[-2:]] == ["ana", "bruno"]

        # Budgets are an admin's: an operator is refused, and that is audited too.
        assert a.post("/api/agents/po/budget", json={"tokens_per_day": 5}).status_code == 403

        backend.operators.revoke("bruno")
        assert b.get("/api/me").status_code == 401  # at once

    mine = _audit(live, operator="ana")
    assert [(e["action"], e["outcome"], e["status"]) for e in mine] == [
        ("approve", "done", 200),
        ("approve", "refused", 409),
        ("set_budget", "refused", 403),
    ]
    assert mine[0]["target"] == {"pr_action_id": pr_id}
    assert mine[0]["reason"] == "reviewed"
    assert [(e["operator"], e["outcome"]) for e in _audit(live, operator="vera")] == [
        ("vera", "refused")
    ]
    admin = _audit(live, operator="admin")
    assert any(e["as_operator"] == "dev-api" and e["error"] == "forbidden" for e in admin)
    page = live.http.get("/api/audit", params={"limit": 2})
    assert len(page.json()) == 2
    assert page.headers["X-Next-Cursor"]
    rest = _audit(live, cursor=page.headers["X-Next-Cursor"], limit=1000)
    everything = _audit(live, limit=1000)
    assert [e["id"] for e in page.json() + rest] == [e["id"] for e in everything]

    # The PR's own timeline of operator actions: every try on it, refused ones too, and
    # nothing done elsewhere (the budget); the newest N of them with tail.
    on_pr = _audit(live, target=pr_id)
    assert [(e["operator"], e["status"]) for e in on_pr] == [
        ("vera", 403),
        ("ana", 200),
        ("ana", 409),
        ("admin", 403),
        ("bruno", 200),
    ]
    assert _audit(live, target=pr_id, tail=2) == on_pr[-2:]
    assert _audit(live, tail=1) == everything[-1:]
    assert _audit(live, target="no-such-item") == []
    for bad in ({"tail": 2, "after": 1}, {"tail": 0}, {"target": "../etc"}, {"target": "x'--"}):
        refused = live.http.get("/api/audit", params=bad)
        assert refused.status_code == 422, (bad, refused.text)


def test_docs_need_the_token_unless_published(live_sqlite: Live, tmp_path: Path) -> None:
    assert httpx.get(f"{live_sqlite.url}/openapi.json").status_code == 401
    assert httpx.get(f"{live_sqlite.url}/docs").status_code == 401
    assert live_sqlite.http.get("/openapi.json").json()["paths"]["/api/audit"]
    assert b"cadencia_" in httpx.get(f"{live_sqlite.url}/metrics").content  # loopback: open
    settings = load_settings(
        data_dir=tmp_path / "pub", token="t" * 20, public_docs=True, metrics_access="token"
    )
    for running in live_backend(settings):
        assert httpx.get(f"{running.url}/openapi.json", timeout=60).status_code == 200
        assert httpx.get(f"{running.url}/metrics").status_code == 401
        assert running.http.get("/metrics").status_code == 200


def test_operators_command_adds_lists_and_revokes(tmp_path: Path, capsys: Any) -> None:
    data = ["--data-dir", str(tmp_path)]
    assert main(["operators", "add", "ana", "--role", "operator", *data]) == 0
    token = capsys.readouterr().out.strip().splitlines()[-1]
    assert token.startswith("cad_")
    assert main(["operators", "add", "ana", "--role", "viewer", *data]) == 2  # live name
    assert main(["operators", "list", "--json", *data]) == 0
    listed = capsys.readouterr().out
    assert '"name": "ana"' in listed
    assert token not in listed
    assert main(["operators", "revoke", "ana", *data]) == 0
    assert main(["operators", "revoke", "ana", *data]) == 2
