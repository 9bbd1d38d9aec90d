"""Reviewed waivers over the real API (loopback uvicorn, real git, real scanners).

A documented demo credential in a PR's docs is flagged by detect-secrets; the PR cannot
waive it itself (a waiver file in its tree changes nothing), an operator can: the finding
then stops blocking, the PR is re-evaluated by its real gates, the timeline and the event
log say who waived what and why.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from backend.gates.findings import fingerprint
from backend.prs.records import PullRequest
from tests.integration.api.conftest import Live
from tests.integration.prs.test_pipeline_support import require_scanners

DEMO_LINE = '    demo_password = "Kq81xZp-demo-only"'
DOCS = f"# Local development\n\nThe demo stack logs in with a fixed account:\n\n{DEMO_LINE}\n"
WAIVED_ID = fingerprint("detect-secrets", "Secret Keyword", "docs/local-dev.md", DEMO_LINE)
REASON = "documented demo account of the local stack, not a credential of anything real"


def _open_pr(live: Live, files: dict[str, str], pr_id: str) -> str:
    """A PR committed with real git and inserted in ``awaiting_qa`` (no author loop)."""
    backend = live.backend
    project = live.http.post("/api/projects", json={"name": f"w-{pr_id}"}).json()["id"]
    session = live.http.post(f"/api/projects/{project}/sessions", json={"title": "s"}).json()
    git = backend.pipeline.git(project)
    git.ensure_repo()
    git.create_branch(f"feature/{pr_id}")
    head = git.commit_files(f"feature/{pr_id}", files, "docs")
    pr = PullRequest.opened(
        id=pr_id,
        kind="infra",
        project_id=project,
        session_id=session["id"],
        author="infra",
        title="docs",
        branch=f"feature/{pr_id}",
        head=head,
        files=sorted(files),
        pr_id=None,
        pr_url=None,
    )
    with backend.events.db.transaction() as tx:
        backend.pipeline.prs.insert(tx, pr, actor="infra")
    return pr_id


def _events(live: Live, kind: str) -> list[dict[str, Any]]:
    events = live.http.get("/api/events", params={"limit": 1000}).json()
    return [e for e in events if e["type"] == kind]


def test_an_operator_waives_one_finding_and_the_pr_is_re_evaluated(live_sqlite: Live) -> None:
    require_scanners()
    live = live_sqlite
    # The PR's own "waiver" names the right id and reason: it must change nothing.
    own = json.dumps({"waivers": [{"finding": WAIVED_ID, "reason": "trust me"}]})
    pr_id = _open_pr(live, {"docs/local-dev.md": DOCS, ".cadencia/waivers.json": own}, "act_waive1")
    pr = live.backend.pipeline.run_gates(pr_id)
    assert pr.gate_status == "changes_requested"
    findings = live.http.get(f"/api/prs/{pr_id}/findings").json()["findings"]
    ours = [f for f in findings if f["id"] == WAIVED_ID]
    assert [(f["tool"], f["rule"], f["line"], f["waived"]) for f in ours] == [
        ("detect-secrets", "Secret Keyword", 5, None)
    ]

    url = f"/api/prs/{pr_id}/waivers"
    body = {"finding": WAIVED_ID, "operator": "ana"}
    assert live.http.post(url, json=body).status_code == 422  # no reason
    assert live.http.post(url, json={**body, "reason": "  "}).status_code == 422
    missing = live.http.post(url, json={**body, "finding": "f_0000000000000000", "reason": "x"})
    assert missing.status_code == 404, missing.text
    assert missing.json()["error"]["code"]
    unknown = live.http.post("/api/prs/act_nope/waivers", json={**body, "reason": "x"})
    assert unknown.status_code == 404
    assert live.http.get(f"/api/prs/{pr_id}").json()["gate_status"] == "changes_requested"

    done = live.http.post(url, json={**body, "reason": REASON})
    assert done.status_code == 201, done.text
    waiver = done.json()
    assert (waiver["reevaluated"], waiver["note"]) == (True, f"waived by ana: {REASON}")
    assert waiver["pr"]["gate_status"] in ("awaiting_qa", "awaiting_secops", "awaiting_human")
    live.backend.pipeline.wait_gates(120)

    after = live.http.get(f"/api/prs/{pr_id}").json()
    assert after["gate_status"] == "awaiting_human", after  # the real gates ran again
    again = [f for f in after["findings"] if f["id"] == WAIVED_ID]
    assert [f["waived"]["note"] for f in again] == [f"waived by ana: {REASON}"]
    notes = [t["note"] or "" for t in after["timeline"]]
    assert any(n.startswith(f"waived by ana: {REASON} (detect-secrets:") for n in notes), notes
    [event] = _events(live, "gate.finding_waived")
    assert {k: event["payload"][k] for k in ("pr_id", "finding", "gate", "operator", "reason")} == {
        "pr_id": pr_id,
        "finding": WAIVED_ID,
        "gate": "secops",
        "operator": "ana",
        "reason": REASON,
    }
    assert live.http.post(url, json={**body, "reason": REASON}).status_code == 409  # twice

    merged = live.http.post(f"/api/prs/{pr_id}/approve", json={"operator": "ana"})
    assert merged.status_code == 200, merged.text
    late = live.http.post(url, json={**body, "reason": REASON})
    assert late.status_code == 409


def test_a_waiver_leaves_other_blockers_and_is_recorded(live: Live) -> None:
    """No scanner: verdicts recorded by hand. One waiver of two blockers: still sent back."""
    pr_id = _open_pr(live, {"docs/a.md": "a\n"}, "act_waive2")
    pipeline = live.backend.pipeline
    pipeline.record_verdict(pr_id, "qa", "pass")
    found = [
        {"id": "f_aaaaaaaaaaaaaaaa", "tool": "semgrep", "rule": "r1", "file": "docs/a.md",
         "line": 1, "severity": "error", "message": "m"},
        {"id": "f_bbbbbbbbbbbbbbbb", "tool": "semgrep", "rule": "r2", "file": "docs/a.md",
         "line": 1, "severity": "error", "message": "m"},
    ]  # fmt: skip
    pipeline.record_verdict(pr_id, "secops", "fail", found, "2 blocking finding(s)")
    done = live.http.post(
        f"/api/prs/{pr_id}/waivers",
        json={"finding": "f_aaaaaaaaaaaaaaaa", "operator": "rui", "reason": "known"},
    )
    assert done.status_code == 201, done.text
    assert (done.json()["reevaluated"], done.json()["pr"]["gate_status"]) == (
        False,
        "changes_requested",
    )
    pr = live.http.get(f"/api/prs/{pr_id}").json()
    waived = {f["id"]: (f["waived"] or {}).get("operator") for f in pr["findings"]}
    assert waived == {"f_aaaaaaaaaaaaaaaa": "rui", "f_bbbbbbbbbbbbbbbb": None}
    assert pr["timeline"][-1]["note"].startswith("waived by rui: known (semgrep:r1 docs/a.md:1)")
    [event] = _events(live, "gate.finding_waived")
    assert event["payload"]["reevaluated"] is False

    # One finding on ONE PR: the same finding on another PR is not waived by it.
    other = _open_pr(live, {"docs/a.md": "a\n"}, "act_waive3")
    pipeline.record_verdict(other, "qa", "pass")
    pipeline.record_verdict(other, "secops", "fail", found, "2 blocking finding(s)")
    assert [f["waived"] for f in live.http.get(f"/api/prs/{other}").json()["findings"]] == [
        None,
        None,
    ]


def test_a_waiver_is_the_token_operators_and_a_viewer_cannot_waive(live: Live) -> None:
    pr_id = _open_pr(live, {"docs/a.md": "a\n"}, "act_waive4")
    pipeline = live.backend.pipeline
    pipeline.record_verdict(pr_id, "qa", "pass")
    found = [
        {"id": "f_cccccccccccccccc", "tool": "semgrep", "rule": "r1", "file": "docs/a.md",
         "line": 1, "severity": "error", "message": "m"},
    ]  # fmt: skip
    pipeline.record_verdict(pr_id, "secops", "fail", found, "1 blocking finding(s)")
    _, vera = live.backend.operators.add("vera", "viewer")
    _, ana = live.backend.operators.add("ana", "operator")
    url = f"{live.url}/api/prs/{pr_id}/waivers"
    body = {"finding": "f_cccccccccccccccc", "reason": "known", "operator": "somebody-else"}

    refused = httpx.post(url, json=body, headers={"Authorization": f"Bearer {vera}"})
    assert refused.status_code == 403, refused.text
    assert [f["waived"] for f in live.http.get(f"/api/prs/{pr_id}").json()["findings"]] == [None]

    done = httpx.post(url, json=body, headers={"Authorization": f"Bearer {ana}"})
    assert done.status_code == 201, done.text
    assert done.json()["operator"] == "ana"  # the token's operator, not the body's name
    [event] = _events(live, "gate.finding_waived")
    assert event["payload"]["operator"] == "ana"
