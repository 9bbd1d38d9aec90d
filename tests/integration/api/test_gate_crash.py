"""``kill -9`` while a PR's gate job runs: after a restart the PR leaves the gate (issue 12).

A real ``cadencia serve`` subprocess (SQLite data dir, real git, real scanners, a short
lease) opens the Infra agent's PR over HTTP. The test waits until the gate job is claimed,
then takes SQLite's write lock, checks the job is still running and kills the process, so
the kill always lands mid-run (the job cannot finish while the lock is held). A second
``serve`` on the same data dir must claim the job again once the lease expires and settle
the PR. Every wait is on a condition with a generous deadline.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import psycopg

from backend.gates.runner import resolve_semgrep
from backend.jobs import Jobs
from backend.prs.flow import gates_key
from backend.store.db import open_database
from tests.ci import require, require_binary

TOKEN = "crash-token-123"
LEASE_S = 4.0
IN_GATE = ("awaiting_qa", "awaiting_secops")
SERVE = (sys.executable, "-m", "backend.cli", "serve")


class Serve:
    """One ``cadencia serve`` subprocess on a data dir; its output goes to a log file."""

    def __init__(self, data_dir: Path, log: Path, database: str | None = None) -> None:
        port = _free_port()
        env = {
            **os.environ,
            "CADENCIA_TOKEN": TOKEN,
            "CADENCIA_GATE_LEASE_S": str(LEASE_S),
        }
        self.log = log
        with log.open("ab") as out:
            self.proc = subprocess.Popen(
                [*SERVE, "--port", str(port), "--data-dir", str(data_dir)]
                + (["--database", database] if database else []),
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.url = f"http://127.0.0.1:{port}"
        self.http = httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
        )
        _until(self._healthy, "serve to answer /healthz", 90, self.output)

    def _healthy(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"serve exited:\n{self.output()}")
        try:
            return self.http.get("/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        self.http.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _until(
    condition: Callable[[], Any],
    what: str,
    timeout: float,
    context: Callable[[], str] = lambda: "",
) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}\n{context()}")
        time.sleep(0.05)


def _job(db: Path, pr: str) -> dict[str, Any] | None:
    conn = sqlite3.connect(db, timeout=30)
    conn.row_factory = sqlite3.Row
    try:
        row = conn.execute(
            "SELECT * FROM jobs WHERE unique_key = ? ORDER BY id DESC LIMIT 1", (gates_key(pr),)
        ).fetchone()
        return dict(row) if row is not None else None
    finally:
        conn.close()


def _open_infra_pr(http: httpx.Client) -> str:
    """The Infra agent's PR, through the same API calls an operator's session makes."""
    project = http.post("/api/projects", json={"name": "loja", "template": "demo"}).json()
    session = http.post(f"/api/projects/{project['id']}/sessions", json={"title": "s1"}).json()
    base = f"/api/projects/{project['id']}/sessions/{session['id']}/agents"
    for agent in ("criativo", "po", "arquiteto"):
        assert http.post(f"{base}/{agent}/turns", json={"text": "vamos"}).status_code == 200
    handoff = http.post(f"{base}/arquiteto/handoff-infra", json={"note": "pronto"}).json()
    accepted = http.post(f"/api/handoffs/{handoff['id']}/accept", json={"operator": "ana"})
    assert accepted.status_code == 200, accepted.text
    turn = http.post(f"{base}/infra/turns", json={"text": "comece"}).json()
    return str(turn["tool_results"][0]["result"]["proposal"]["pr_action_id"])


def test_kill_9_during_a_gate_then_restart_the_pr_leaves_the_gate(
    data_dir: Path, tmp_path: Path
) -> None:
    require_binary("hadolint")
    require_binary("detect-secrets")
    require(resolve_semgrep() is not None, "semgrep")
    db = data_dir / "cadencia.sqlite3"
    first = Serve(data_dir, tmp_path / "serve-1.log")
    try:
        pr = _open_infra_pr(first.http)
        claimed = _until(
            lambda: (job := _job(db, pr)) is not None and job["state"] == "running" and job,
            "the PR's gate job to be claimed",
            60,
            first.output,
        )
        assert claimed["attempts"] == 1
        # Hold SQLite's write lock: the job cannot record a verdict or finish meanwhile,
        # so the kill lands while it is running, whatever the scanners' speed.
        lock = sqlite3.connect(db, timeout=30, isolation_level=None)
        try:
            lock.execute("BEGIN IMMEDIATE")
            status, owner = lock.execute(
                "SELECT state, owner FROM jobs WHERE unique_key = ? ORDER BY id DESC LIMIT 1",
                (gates_key(pr),),
            ).fetchone()
            assert status == "running", f"the job finished before the kill:\n{first.output()}"
            os.kill(first.proc.pid, signal.SIGKILL)
            first.proc.wait(30)
            killed_at = time.monotonic()
        finally:
            lock.execute("ROLLBACK")
            lock.close()
    finally:
        first.stop()

    second = Serve(data_dir, tmp_path / "serve-2.log")
    try:
        up_at = time.monotonic()
        assert second.http.get(f"/api/prs/{pr}").json()["gate_status"] in IN_GATE
        retaken = _until(
            lambda: (job := _job(db, pr)) is not None and job["attempts"] >= 2 and job,
            "the restarted serve to claim the job again",
            60 + LEASE_S,
            second.output,
        )
        reclaimed_at = time.monotonic()
        assert retaken["owner"] != owner  # a new worker (or none: it already finished)
        body = _until(
            lambda: (
                (b := second.http.get(f"/api/prs/{pr}").json())["gate_status"] not in IN_GATE
                and b["gate_status"] != "changes_requested"
                and b
            ),
            "the PR to leave the gate",
            300,
            second.output,
        )
        assert body["gate_status"] in ("awaiting_human", "blocked"), body
        # The run records its end just after its last verdict.
        job = _until(
            lambda: (j := _job(db, pr)) is not None and j["state"] == "done" and j,
            "the job to be done",
            60,
            second.output,
        )
        assert job["attempts"] == 2, job
        # The job came back within one lease of the crash (plus the sweep's period and
        # start-up), not "whenever": the lease is what bounds a stranded PR.
        assert reclaimed_at - killed_at <= (up_at - killed_at) + LEASE_S + 10, (
            reclaimed_at - killed_at,
            up_at - killed_at,
        )
        print(
            f"\nkill→up {up_at - killed_at:.1f}s, kill→reclaimed {reclaimed_at - killed_at:.1f}s,"
            f" kill→settled {time.monotonic() - killed_at:.1f}s (lease {LEASE_S}s)"
        )
        history = [t["to"] for t in second.http.get(f"/api/prs/{pr}").json()["timeline"]]
        assert history[-1] == body["gate_status"]
    finally:
        second.stop()


def test_two_serves_on_postgres_one_runs_the_gates_and_the_other_takes_over_after_kill_9(
    data_dir: Path, tmp_path: Path, pg_url: str
) -> None:
    require_binary("hadolint")
    require_binary("detect-secrets")
    require(resolve_semgrep() is not None, "semgrep")
    serves = [Serve(data_dir, tmp_path / f"serve-{n}.log", pg_url) for n in "ab"]
    db = open_database(pg_url)
    jobs = Jobs(db)
    try:
        pr = _open_infra_pr(serves[0].http)
        claimed = _until(
            lambda: (
                (job := jobs.latest(gates_key(pr))) is not None and job.state == "running" and job
            ),
            "one serve to claim the PR's gate job",
            60,
        )
        assert claimed.attempts == 1
        # Lock the job's row: its owner can neither beat nor finish, so it dies mid-run.
        with psycopg.connect(pg_url) as lock:
            row = lock.execute(
                "SELECT state, owner FROM jobs WHERE unique_key = %s AND state = 'running'"
                " FOR UPDATE",
                (gates_key(pr),),
            ).fetchone()
            assert row is not None
            assert row[0] == "running", "the job finished before the kill"
            pid = int(str(row[1]).split(":")[1])
            [owner] = [s for s in serves if s.proc.pid == pid]
            [survivor] = [s for s in serves if s is not owner]
            os.kill(owner.proc.pid, signal.SIGKILL)
            owner.proc.wait(30)
            lock.rollback()
        body = _until(
            lambda: (
                (b := survivor.http.get(f"/api/prs/{pr}").json())["gate_status"] not in IN_GATE
                and b["gate_status"] != "changes_requested"
                and b
            ),
            "the surviving serve to settle the PR",
            300,
            survivor.output,
        )
        assert body["gate_status"] in ("awaiting_human", "blocked"), body
        job = _until(
            lambda: (j := jobs.latest(gates_key(pr))) is not None and j.state == "done" and j,
            "done",
            60,
        )
        # Exactly two claims: the dead owner's, then the survivor's once the lease expired
        # (while the owner lived, the survivor's sweep never ran the same gates).
        assert job.attempts == 2, job
    finally:
        db.close()
        for serve in serves:
            serve.stop()
