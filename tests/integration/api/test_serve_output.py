"""What a real ``cadencia serve`` writes to its stdout and stderr — what ends up in
``serve.log`` or the journal — holds no credential: not the bootstrap token it generated,
not a query string a client sent."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

QUERY_SECRET = "sig-4f1c9e"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_output_holds_neither_the_generated_token_nor_query_strings(
    tmp_path: Path,
) -> None:
    data_dir, log = tmp_path / "data", tmp_path / "serve.log"
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "CADENCIA_TOKEN"}
    where = ["--data-dir", str(data_dir), "--database", f"sqlite:///{tmp_path / 'db.sqlite3'}"]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "backend.cli", "serve", "--port", str(port), *where],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            while True:
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, "serve did not come up"
                try:
                    if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.2)
            token = (data_dir / "token").read_text().strip()
            answer = httpx.get(
                f"{url}/api/roster",
                params={"signature": QUERY_SECRET},
                headers={"Authorization": f"Bearer {token}"},
                timeout=30,
            )
            assert answer.status_code == 200, answer.text
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
    written = log.read_text()
    assert str(data_dir / "token") in written  # the operator is told where the token is
    assert token not in written
    access = [json.loads(line)["msg"] for line in written.splitlines() if "uvicorn.access" in line]
    assert any('"GET /api/roster HTTP/1.1" 200' in msg for msg in access), access  # there...
    assert QUERY_SECRET not in written  # ...without its query string
