"""The Node entry the planner finds is the file npm itself starts, run by the real tools.

Each project's files print which file ran. ``npm start`` (or ``node .`` for ``main``) is the
oracle; the proposal's Dockerfile ``CMD`` is run with the real ``node`` in the same directory
(after the real ``npm run build`` when there is one) and must run the same file last. Then the
proposals pass the real gates (hadolint, semgrep, detect-secrets). Missing tools skip locally
and FAIL with ``CI=true``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from backend.gates.runner import resolve_semgrep, run_gates
from backend.planner import plan, propose
from tests.ci import require, require_binary

_PRINT = 'console.log("RAN:" + require("path").relative(process.cwd(), __filename));\n'
_BUILD = (
    "const fs = require('fs');\n"
    "fs.mkdirSync('dist', { recursive: true });\n"
    f"fs.writeFileSync('dist/index.js', {json.dumps(_PRINT)});\n"
)

# name → (package.json, files, oracle argv)
CASES: dict[str, tuple[dict, dict[str, str], list[str]]] = {
    "plain": ({"scripts": {"start": "node server.js"}}, {"server.js": _PRINT}, ["npm", "start"]),
    "env-and-options": (
        {"scripts": {"start": "NODE_ENV=production node --enable-source-maps src/app.js"}},
        {"src/app.js": _PRINT},
        ["npm", "start"],
    ),
    "run-chain-extensionless": (
        {"scripts": {"start": "npm run serve", "serve": "npm run web", "web": "node lib/serve"}},
        {"lib/serve.js": _PRINT},
        ["npm", "start"],
    ),
    "build-then-node": (
        {"scripts": {"start": "npm run build && node dist/index.js", "build": "node make.js"}},
        {"make.js": _BUILD},
        ["npm", "start"],
    ),
    "local-preload": (
        {"scripts": {"start": "node -r ./preload.js server.js"}},
        {"preload.js": _PRINT, "server.js": _PRINT},
        ["npm", "start"],
    ),
    "node-dot-main": (
        {"main": "lib/main.js", "scripts": {"start": "node ."}},
        {"lib/main.js": _PRINT},
        ["npm", "start"],
    ),
    "npm-default-server-js": (
        {"main": "lib/index.js", "scripts": {"test": "node -e 0"}},
        {"server.js": _PRINT, "lib/index.js": _PRINT},
        ["npm", "start"],
    ),
    "migrate-then-serve": (
        {"scripts": {"start": "node migrate.js; node server.js"}},
        {"migrate.js": _PRINT, "server.js": _PRINT},
        ["npm", "start"],
    ),
    "main-without-extension": ({"main": "app"}, {"app.js": _PRINT}, ["node", "."]),
    "main-named-like-an-option": ({"main": "-r.js"}, {"-r.js": _PRINT}, ["node", "."]),
}


def _write(root: Path, pkg: dict, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    (root / "package.json").write_text(json.dumps({"name": root.name, **pkg}))
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _ran(argv: list[str], cwd: Path) -> list[str]:
    # argv is npm's or the planner's start: node options first, then the entry file, which
    # the planner writes as ./-x.js when its name starts with "-" (node takes no "--" there,
    # since the options before the file are the start's own)
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, (argv, done.stdout, done.stderr)
    return [line for line in done.stdout.splitlines() if line.startswith("RAN:")]


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_image_runs_what_npm_runs(tmp_path: Path, name: str) -> None:
    node, npm = require_binary("node"), require_binary("npm")
    pkg, files, oracle = CASES[name]
    repo = _write(tmp_path / name, pkg, files)
    expected = _ran([npm, "start"] if oracle == ["npm", "start"] else [node, "."], repo)
    argv = propose(repo).modules[0].start
    assert argv is not None
    assert argv[0] == "node", argv
    if "build" in pkg.get("scripts", {}):
        _ran([npm, "run", "build", "--silent"], repo)  # the Dockerfile's build stage
    got = _ran([node, *argv[1:]], repo)
    assert got, argv
    assert got[-1] == expected[-1], (argv, got, expected)
    if name == "local-preload":
        assert got == expected  # the preload runs in the image too


def test_proposals_pass_the_real_gates(tmp_path: Path) -> None:
    """The new commands (``--require=``, ``./-r.js``, a tsc compile step) pass the gates."""
    for binary in ("hadolint", "detect-secrets"):
        require(shutil.which(binary) is not None, f"the {binary!r} scanner")
    require(resolve_semgrep() is not None, "the semgrep scanner")
    ts = _write(
        tmp_path / "ts-no-build",
        {
            "scripts": {"start": "nodemon --exec ts-node src/index.ts"},
            "dependencies": {"express": "4.19.2"},
            "devDependencies": {"typescript": "5.4.5", "ts-node": "10.9.2"},
        },
        {
            "src/index.ts": "import express from 'express';\nexpress().listen(3000);\n",
            "tsconfig.json": '{"compilerOptions": {"outDir": "dist"}, "include": ["src"]}',
        },
    )
    files = {f"ts/{rel}": text for rel, text in plan(ts).items()}
    assert "RUN ./node_modules/.bin/tsc -p tsconfig.json && npm prune" in files["ts/Dockerfile"]
    for name in ("local-preload", "main-named-like-an-option", "run-chain-extensionless"):
        pkg, sources, _ = CASES[name]
        repo = _write(tmp_path / name, {**pkg, "dependencies": {"express": "4"}}, sources)
        files |= {f"{name}/{rel}": text for rel, text in plan(repo).items()}
    report = run_gates(files)
    assert report.verdict == "pass", report.to_json()
