"""The Node entry point from package.json: every shape of ``scripts.start``, ``main`` and
``bin``, the build output a TypeScript entry maps to, and untrusted input refused.

Each case writes a small project (package.json, tsconfig, empty sources) and reads what the
proposal runs: the Dockerfile's ``CMD`` (``propose().modules[0].start``). The real shapes are
written after public repositories, named with their commit in each test's docstring.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.module_map import Module, ModuleMap
from backend.planner import WORKFLOW_PATH, propose
from backend.planner.detect import inspect_module
from backend.planner.node_entry import MAX_DEPTH, MAX_RESOLUTIONS, inside, read_package

_SERVER = "require('http').createServer().listen(process.env.PORT || 3000)\n"
_TSCONFIG = {"compilerOptions": {"outDir": "./dist", "rootDir": "./src"}}


def _repo(tmp_path: Path, pkg: object, files: dict[str, str] | None = None) -> Path:
    (tmp_path / "package.json").write_text(json.dumps(pkg))
    for rel, text in (files or {}).items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def _ts(extra: dict[str, str] | None = None) -> dict[str, str]:
    return {"src/index.ts": _SERVER, "tsconfig.json": json.dumps(_TSCONFIG), **(extra or {})}


def _run(repo: Path) -> tuple[list[str] | None, list[str]]:
    module = propose(repo).modules[0]
    return module.start, module.notes


# --- the shapes of scripts.start -----------------------------------------------------------


def test_nest_start_with_start_prod_runs_the_built_main(tmp_path: Path) -> None:
    """nestjs/typescript-starter@c4d9330f5513eda0fb5df594f6b34a11fde1a934: ``start: nest
    start`` (the Nest CLI, a devDependency), ``start:prod: node dist/main``, ``build: nest
    build``, tsconfig ``outDir: ./dist``."""
    pkg = {
        "name": "nest-typescript-starter",
        "scripts": {
            "build": "nest build",
            "start": "nest start",
            "start:dev": "nest start --watch",
            "start:prod": "node dist/main",
        },
        "dependencies": {"@nestjs/core": "^11.0.1"},
        "devDependencies": {"@nestjs/cli": "^11.0.0", "typescript": "^5.7.3"},
    }
    files = {
        "src/main.ts": "await app.listen(process.env.PORT ?? 3000);\n",
        "tsconfig.json": '{"compilerOptions": {"outDir": "./dist", "baseUrl": "./"}}',
    }
    module = propose(_repo(tmp_path, pkg, files)).modules[0]
    assert module.start == ["node", "dist/main"]
    assert module.start_source == "package.json start:prod"


def test_start_through_npm_run_serve(tmp_path: Path) -> None:
    """microsoft/TypeScript-Node-Starter@1e15e8b4bf6136ee181a8d46ccda9d5b3ed4e479: ``start:
    npm run serve``, ``serve: node dist/server.js``, build chain ``npm run build-ts`` → tsc."""
    pkg = {
        "scripts": {
            "build-ts": "tsc",
            "build": "npm run build-sass && npm run build-ts && npm run lint",
            "serve": "node dist/server.js",
            "start": "npm run serve",
            "watch-node": "nodemon dist/server.js",
        }
    }
    module = propose(_repo(tmp_path, pkg, {"src/server.ts": _SERVER})).modules[0]
    assert module.start == ["node", "dist/server.js"]
    assert module.start_source == "package.json start (via serve)"


def test_nodemon_exec_ts_node_without_build_script_compiles_in_the_image(tmp_path: Path) -> None:
    """benawad/graphql-ts-server-boilerplate@ea96c26a257d7656903148cd90e368c4ea9ef28b:
    ``start: NODE_ENV=development nodemon --exec ts-node src/index.ts``, no build script,
    tsconfig ``outDir: ./dist`` and ``include: ["./src/**/*.ts"]``, typescript a
    devDependency: the image compiles with tsc and runs dist/index.js."""
    pkg = {
        "scripts": {"start": "NODE_ENV=development nodemon --exec ts-node src/index.ts"},
        "dependencies": {"graphql-yoga": "^1.14.10"},
        "devDependencies": {"nodemon": "^1.17.5", "ts-node": "^6.0.5", "typescript": "^2.9.1"},
    }
    tsconfig = {"compilerOptions": {"outDir": "./dist"}, "include": ["./src/**/*.ts"]}
    files = {
        "src/index.ts": _SERVER,
        "src/modules/user/resolvers.ts": "",
        "tsconfig.json": json.dumps(tsconfig),
    }
    proposal = propose(_repo(tmp_path, pkg, files))
    assert proposal.modules[0].start == ["node", "dist/index.js"]
    dockerfile = proposal.files["Dockerfile"]
    assert "RUN ./node_modules/.bin/tsc -p tsconfig.json && npm prune" in dockerfile
    assert "run: ./node_modules/.bin/tsc -p tsconfig.json" in proposal.files[WORKFLOW_PATH]


def test_nodemon_without_a_script_runs_nodemon_json_exec(tmp_path: Path) -> None:
    """santiq/bulletproof-nodejs@7ce1b4690c4e96659cb1ed0d367b08b3ab35a24b (its Procfile left
    out): ``start: nodemon``, nodemon.json ``exec: ts-node -r tsconfig-paths/register
    --transpile-only ./src/app.ts``, ``build: tsc``, tsconfig ``outDir: ./build``,
    ``include: ["./src/**/*"]``: the Procfile of that repository says ``node build/app.js``."""
    pkg = {
        "main": "src/app.ts",
        "scripts": {"build": "tsc", "start": "nodemon"},
        "devDependencies": {"nodemon": "^2.0.0", "ts-node": "^9.0.0", "typescript": "^4.0.0"},
    }
    exec_ = "ts-node -r tsconfig-paths/register --transpile-only ./src/app.ts"
    files = {
        "src/app.ts": _SERVER,
        "src/api/index.ts": "",
        "nodemon.json": json.dumps({"watch": ["src", ".env"], "exec": exec_}),
        "tsconfig.json": json.dumps(
            {"compilerOptions": {"outDir": "./build"}, "include": ["./src/**/*"]}
        ),
    }
    assert _run(_repo(tmp_path, pkg, files))[0] == ["node", "build/app.js"]


def test_no_start_script_prefers_start_prod_over_a_missing_main(tmp_path: Path) -> None:
    """edwinhern/express-typescript-2024@c6ddcba066a89b9703ebc84052d4b68ba75145c8: no
    ``start``, ``start:dev: tsx watch --clear-screen=false src/index.ts | pino-pretty``,
    ``start:prod: node dist/index.js``, ``build: tsup``, ``main: index.ts`` (no such file)."""
    pkg = {
        "main": "index.ts",
        "scripts": {
            "build": "tsup",
            "start:dev": "tsx watch --clear-screen=false src/index.ts | pino-pretty",
            "start:prod": "node dist/index.js",
        },
    }
    module = propose(_repo(tmp_path, pkg, _ts())).modules[0]
    assert module.start == ["node", "dist/index.js"]
    assert module.start_source == "package.json start:prod"


def test_a_chain_whose_last_command_is_the_server(tmp_path: Path) -> None:
    """sahat/hackathon-starter@dbcac7a7b159bf6b8e93eb071a6f066c0b0ab6c8: ``start: npm run
    scss && node app.js`` (scss: ``sass ...``, also run by postinstall)."""
    pkg = {
        "scripts": {
            "postinstall": "patch-package && npm run scss",
            "scss": "sass --no-source-map --update ./public/css:./public/css",
            "start": "npm run scss && node app.js",
        },
        "dependencies": {"express": "^5.1.0"},
    }
    start, notes = _run(_repo(tmp_path, pkg, {"app.js": _SERVER}))
    assert start == ["node", "app.js"]
    assert notes == []


def test_typescript_boilerplate_start_on_the_build_output(tmp_path: Path) -> None:
    """jsynowiec/node-typescript-boilerplate@8b27c174543eedf5d83e1038adc1664dc53ed9c0:
    ``start: node build/src/main.js``, ``build: tsc -p tsconfig.json`` (output not in git)."""
    pkg = {
        "scripts": {"start": "node build/src/main.js", "build": "tsc -p tsconfig.json"},
        "dependencies": {"tslib": "~2.8"},
    }
    assert _run(_repo(tmp_path, pkg, {"src/main.ts": ""}))[0] == ["node", "build/src/main.js"]


def test_a_start_on_an_output_tsc_does_not_write_is_corrected(tmp_path: Path) -> None:
    """jsynowiec/node-typescript-boilerplate@8b27c174543eedf5d83e1038adc1664dc53ed9c0 with its
    tsconfig: ``rootDir: src``, ``outDir: build``, ``include: ["src"]`` (comments, trailing
    commas): tsc writes src/main.ts to build/main.js, the start script runs build/src/main.js."""
    pkg = {"scripts": {"start": "node build/src/main.js", "build": "tsc -p tsconfig.json"}}
    tsconfig = '{\n  "compilerOptions": {\n    // output\n    "rootDir": "src",\n'
    tsconfig += '    "outDir": "build",\n    "incremental": true,\n  },\n  "include": ["src"],\n}\n'
    start, notes = _run(_repo(tmp_path, pkg, {"src/main.ts": _SERVER, "tsconfig.json": tsconfig}))
    assert start == ["node", "build/main.js"]
    assert notes == [
        "package.json start runs build/src/main.js, but the build (tsc, tsconfig.json) writes "
        "src/main.ts to build/main.js: the image runs build/main.js"
    ]


def test_a_start_on_the_output_tsc_writes_is_kept(tmp_path: Path) -> None:
    pkg = {"scripts": {"start": "node build/main", "build": "tsc"}}
    tsconfig = json.dumps({"compilerOptions": {"rootDir": "src", "outDir": "build"}})
    files = {"src/main.ts": _SERVER, "src/util/main.ts": "", "tsconfig.json": tsconfig}
    assert _run(_repo(tmp_path, pkg, files)) == (["node", "build/main"], [])


@pytest.mark.parametrize(
    ("start", "build", "argv"),
    [
        ("ts-node src/index.ts", "tsc", ["node", "dist/index.js"]),
        ("ts-node -r tsconfig-paths/register src/index.ts", "tsc", ["node", "dist/index.js"]),
        ("ts-node-dev --respawn --transpile-only src/index.ts", "tsc", ["node", "dist/index.js"]),
        ("tsnd --respawn src/index", "tsc", ["node", "dist/index.js"]),
        ("tsx src/index.ts", "tsc", ["node", "dist/index.js"]),
        ("tsx watch src/index.ts", "rimraf dist && tsc", ["node", "dist/index.js"]),
        ("node --loader ts-node/esm src/index.ts", "tsc", ["node", "dist/index.js"]),
        ("nodemon --exec ts-node src/index.ts", "tsc", ["node", "dist/index.js"]),
        ("nodemon -w src -e ts --exec 'ts-node' src/index.ts", "tsc", ["node", "dist/index.js"]),
        ("npx ts-node src/index.ts", "tsc --outDir out", ["node", "out/index.js"]),
        (
            "ts-node src/index.ts",
            "esbuild src/index.ts --bundle --platform=node --outfile=dist/server.js",
            ["node", "dist/server.js"],
        ),
        ("ts-node src/index.ts", "tsup src/index.ts", ["node", "dist/index.js"]),
    ],
)
def test_typescript_start_runs_its_build_output(
    tmp_path: Path, start: str, build: str, argv: list[str]
) -> None:
    pkg = {"scripts": {"start": start, "build": build}, "devDependencies": {"typescript": "5"}}
    assert _run(_repo(tmp_path, pkg, _ts()))[0] == argv


def test_babel_node_runs_the_babel_output(tmp_path: Path) -> None:
    pkg = {"scripts": {"start": "babel-node src/index.js", "build": "babel src -d dist"}}
    assert _run(_repo(tmp_path, pkg, {"src/index.js": _SERVER}))[0] == ["node", "dist/index.js"]


def test_tsconfig_with_comments_extends_and_no_root_dir(tmp_path: Path) -> None:
    files = {
        "src/server/main.ts": _SERVER,
        "src/lib/db.ts": "",
        "tsconfig.base.json": '{\n  // shared\n  "compilerOptions": {"outDir": "build/js",},\n}',
        "tsconfig.json": '{"extends": "./tsconfig.base.json", /* no rootDir */}',
    }
    pkg = {"scripts": {"start": "ts-node src/server/main.ts", "build": "tsc"}}
    assert _run(_repo(tmp_path, pkg, files))[0] == ["node", "build/js/server/main.js"]


def test_typescript_nothing_compiles_runs_npm_start_and_says_so(tmp_path: Path) -> None:
    pkg = {"scripts": {"start": "ts-node src/index.ts"}}
    start, notes = _run(_repo(tmp_path, pkg, {"src/index.ts": _SERVER}))
    assert start == ["npm", "start"]
    assert notes == [
        "package.json start compiles src/index.ts at run time with ts-node, and no build "
        "script compiles it: the image runs `npm start`, which needs the dev dependencies"
    ]


def test_an_unmapped_build_is_named(tmp_path: Path) -> None:
    pkg = {"scripts": {"start": "ts-node src/index.ts", "build": "webpack"}}
    start, notes = _run(_repo(tmp_path, pkg, _ts()))
    assert start == ["npm", "start"]
    assert "the build script (webpack) is not one the planner maps" in notes[0]


@pytest.mark.parametrize(
    ("start", "deps", "argv", "notes"),
    [
        (
            "node -r dotenv/config dist/server.js",
            {"dependencies": {"dotenv": "16"}},
            ["node", "--require=dotenv/config", "dist/server.js"],
            [],
        ),
        (
            "node --require dotenv/config dist/server.js",
            {"devDependencies": {"dotenv": "16"}},
            ["node", "dist/server.js"],
            ["preload dotenv/config is not a runtime dependency: dropped from the command"],
        ),
        (
            "node --enable-source-maps --inspect=0.0.0.0:9229 dist/main.js",
            {},
            ["node", "--enable-source-maps", "dist/main.js"],
            [],
        ),
        (
            "node --max-old-space-size=512 --env-file .env dist/main.js",
            {},
            ["node", "--max-old-space-size=512", "dist/main.js"],
            [],
        ),
        ("NODE_ENV=production node dist/main.js", {}, ["node", "dist/main.js"], []),
        ("cross-env NODE_ENV=production X=1 node dist/main.js", {}, ["node", "dist/main.js"], []),
        ("env NODE_ENV=production node ./dist/main.js", {}, ["node", "dist/main.js"], []),
        ("npm run build && node dist/index.js", {}, ["node", "dist/index.js"], []),
        ("npm run build&&node dist/index.js", {}, ["node", "dist/index.js"], []),
        ("tsc; node dist/index.js", {}, ["node", "dist/index.js"], []),
        ("node dist/index.js | pino-pretty", {}, ["node", "dist/index.js"], []),
        ("node dist/index.js > /tmp/log 2>&1", {}, ["node", "dist/index.js"], []),
    ],
)
def test_node_options_env_prefixes_and_chains(
    tmp_path: Path, start: str, deps: dict, argv: list[str], notes: list[str]
) -> None:
    pkg = {"scripts": {"start": start, "build": "tsc"}, **deps}
    assert _run(_repo(tmp_path, pkg, _ts())) == (argv, notes)


def test_a_local_preload_is_kept_as_a_project_file(tmp_path: Path) -> None:
    pkg = {"scripts": {"start": "node -r ./tracing.js server.js"}}
    files = {"tracing.js": "", "server.js": _SERVER}
    assert _run(_repo(tmp_path, pkg, files))[0] == ["node", "--require=./tracing.js", "server.js"]


def test_nodemon_on_javascript_runs_node(tmp_path: Path) -> None:
    pkg = {"scripts": {"start": "nodemon --watch src app.js"}}
    assert _run(_repo(tmp_path, pkg, {"app.js": _SERVER}))[0] == ["node", "app.js"]


@pytest.mark.parametrize(
    "start",
    ["yarn serve", "yarn run serve", "pnpm run serve", "pnpm serve", "npm run-script serve"],
)
def test_package_manager_chains_follow_the_script(tmp_path: Path, start: str) -> None:
    pkg = {"scripts": {"start": start, "serve": "npm run web", "web": "node web.js"}}
    module = propose(_repo(tmp_path, pkg, {"web.js": _SERVER})).modules[0]
    assert module.start == ["node", "web.js"]
    assert module.start_source == "package.json start (via serve → web)"


def test_yarn_running_a_binary_not_a_script(tmp_path: Path) -> None:
    pkg = {"scripts": {"start": "yarn node server.js"}}
    assert _run(_repo(tmp_path, pkg, {"server.js": _SERVER}))[0] == ["node", "server.js"]


def test_a_command_before_the_server_is_named(tmp_path: Path) -> None:
    pkg = {"scripts": {"start": "node migrate.js; node server.js"}}
    start, notes = _run(_repo(tmp_path, pkg, {"migrate.js": "", "server.js": _SERVER}))
    assert start == ["node", "server.js"]
    assert notes == [
        "scripts.start runs `node migrate.js` before the server: not in the image's command"
    ]


def test_a_script_loop_is_refused_and_the_fallback_used(tmp_path: Path) -> None:
    pkg = {"scripts": {"start": "npm run a", "a": "yarn b", "b": "npm start"}}
    start, notes = _run(_repo(tmp_path, pkg, {"index.js": _SERVER}))
    assert start == ["node", "index.js"]
    assert notes == ["scripts start → a → b → start loops: ignored"]


def test_a_chain_deeper_than_the_limit_is_refused(tmp_path: Path) -> None:
    hops = MAX_DEPTH + 2
    scripts = {f"s{i}": f"npm run s{i + 1}" for i in range(hops)}
    pkg = {"scripts": {**scripts, "start": "npm run s0", f"s{hops}": "node deep.js"}}
    start, notes = _run(_repo(tmp_path, pkg, {"deep.js": _SERVER}))
    assert start is None
    assert len(notes) == 1
    assert f"over {MAX_DEPTH} hops: ignored" in notes[0]


def test_a_missing_script_in_the_chain_is_named(tmp_path: Path) -> None:
    pkg = {"scripts": {"start": "npm run serve"}}
    start, notes = _run(_repo(tmp_path, pkg, {"app.js": _SERVER}))
    assert start == ["node", "app.js"]
    assert notes == ["scripts.start runs script 'serve', which does not exist"]


def test_next_start_is_run_by_npm(tmp_path: Path) -> None:
    pkg = {"scripts": {"start": "next start", "build": "next build"}}
    assert _run(_repo(tmp_path, pkg, {"server.js": _SERVER}))[0] == ["npm", "start"]


def test_node_eval_is_not_a_file(tmp_path: Path) -> None:
    pkg = {"scripts": {"start": "node -e \"require('./app').listen(3000)\""}}
    assert _run(_repo(tmp_path, pkg, {"app.js": _SERVER}))[0] == ["npm", "start"]


# --- main, bin and npm's own defaults --------------------------------------------------------


def test_main_when_there_is_no_start_script(tmp_path: Path) -> None:
    """expressjs/generator@a1f384101a59cbade670e09b4d6f267c0759e9f1: ``main:
    bin/express-cli.js`` and ``bin: {"express": "./bin/express-cli.js"}``, no start."""
    pkg = {
        "name": "express-generator",
        "main": "bin/express-cli.js",
        "bin": {"express": "./bin/express-cli.js"},
        "scripts": {"lint": "eslint .", "test": "mocha --reporter spec --bail test/"},
    }
    module = propose(_repo(tmp_path, pkg, {"bin/express-cli.js": ""})).modules[0]
    assert module.start == ["node", "bin/express-cli.js"]
    assert module.start_source == "package.json main"


@pytest.mark.parametrize(
    ("main", "files", "argv"),
    [
        ("app", ["app.js"], ["node", "app.js"]),
        ("./lib", ["lib/index.js"], ["node", "lib/index.js"]),
        ("lib/server.mjs", ["lib/server.mjs"], ["node", "lib/server.mjs"]),
        ("src//./server.js", ["src/server.js"], ["node", "src/server.js"]),
    ],
)
def test_main_resolves_like_node(
    tmp_path: Path, main: str, files: list[str], argv: list[str]
) -> None:
    pkg = {"main": main}
    assert _run(_repo(tmp_path, pkg, dict.fromkeys(files, _SERVER)))[0] == argv


def test_main_in_typescript_runs_the_build_output(tmp_path: Path) -> None:
    pkg = {"main": "src/index.ts", "scripts": {"build": "tsc"}}
    assert _run(_repo(tmp_path, pkg, _ts()))[0] == ["node", "dist/index.js"]


def test_start_node_dot_runs_main(tmp_path: Path) -> None:
    pkg = {"main": "lib/server.js", "scripts": {"start": "node ."}}
    assert _run(_repo(tmp_path, pkg, {"lib/server.js": _SERVER}))[0] == ["node", "lib/server.js"]


def test_bin_string_form(tmp_path: Path) -> None:
    pkg = {"name": "@acme/serve", "bin": "./cli/serve.js"}
    module = propose(_repo(tmp_path, pkg, {"cli/serve.js": _SERVER})).modules[0]
    assert module.start == ["node", "cli/serve.js"]
    assert module.start_source == "package.json bin serve"


def test_bin_object_form_prefers_the_package_name(tmp_path: Path) -> None:
    pkg = {"name": "web", "bin": {"admin": "bin/admin.js", "web": "bin/web.js"}}
    files = {"bin/admin.js": "", "bin/web.js": _SERVER}
    assert _run(_repo(tmp_path, pkg, files))[0] == ["node", "bin/web.js"]


def test_npm_default_server_js_before_main(tmp_path: Path) -> None:
    pkg = {"main": "lib/index.js", "scripts": {"test": "mocha"}}
    files = {"server.js": _SERVER, "lib/index.js": ""}
    module = propose(_repo(tmp_path, pkg, files)).modules[0]
    assert module.start == ["node", "server.js"]
    assert module.start_source == "npm start default"


def test_index_js_when_nothing_is_declared(tmp_path: Path) -> None:
    module = propose(_repo(tmp_path, {"name": "svc"}, {"index.js": _SERVER})).modules[0]
    assert module.start == ["node", "index.js"]
    assert module.start_source == "index.js (convention)"


# --- untrusted input -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("../../etc/passwd", "outside the project"),
        ("src/../../../etc/passwd", "outside the project"),
        ("/etc/passwd", "an absolute path"),
        ("C:\\app\\server.js", "an absolute path"),
        ("~/server.js", "a home-directory path"),
        ("~root/server.js", "a home-directory path"),
        ("$HOME/server.js", "not a plain relative path"),
        ("dist\\server.js", "not a plain relative path"),
        ("a\x00.js", "not a usable path"),
        ("x" * 5000, "not a usable path"),
        ("", "not a usable path"),
    ],
)
def test_paths_that_leave_the_project_are_refused(tmp_path: Path, raw: str, why: str) -> None:
    assert inside(tmp_path, raw) == (None, why)


def test_a_main_outside_the_project_is_refused_not_guessed(tmp_path: Path) -> None:
    start, notes = _run(_repo(tmp_path, {"main": "../../etc/passwd"}))
    assert start is None
    assert notes == ["package.json main names '../../etc/passwd': outside the project: refused"]


@pytest.mark.parametrize(
    "start",
    ["node ../../etc/passwd", "node /etc/passwd", "node ~/.ssh/server.js", "node '$HOME/x.js'"],
)
def test_a_start_outside_the_project_is_refused(tmp_path: Path, start: str) -> None:
    module_start, notes = _run(_repo(tmp_path, {"scripts": {"start": start}}))
    assert module_start is None
    assert len(notes) == 1
    assert notes[0].startswith("package.json start names ")
    assert notes[0].endswith(": refused")


def test_a_symlink_out_of_the_project_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "server.js").write_text(_SERVER)
    repo = tmp_path / "repo"
    repo.mkdir()
    os.symlink(outside / "server.js", repo / "server.js")
    start, notes = _run(_repo(repo, {"main": "server.js", "scripts": {"start": "node server.js"}}))
    assert start is None
    assert notes == [
        "package.json start names 'server.js': a link out of the project: refused",
        "package.json main names 'server.js': a link out of the project: refused",
    ]


def test_a_file_named_like_an_option_stays_a_file(tmp_path: Path) -> None:
    assert _run(_repo(tmp_path, {"main": "-r.js"}, {"-r.js": _SERVER}))[0] == ["node", "./-r.js"]


@pytest.mark.parametrize(
    ("raw", "note"),
    [
        (b'{"main": "server.js",', "package.json is not valid JSON (Expecting property name"),
        (b"", "package.json is not valid JSON (Expecting value)"),
        (b'{"main": "caf\xe9.js"}', "package.json is not valid JSON (not UTF-8/16/32 text)"),
        (b"[" * 100_000 + b"]" * 100_000, "package.json nests too deeply: not read"),
        (b'["server.js"]', "package.json is an array, not an object: not read"),
        (b'"server.js"', "package.json is a string, not an object: not read"),
        (b"null", "package.json is null, not an object: not read"),
    ],
)
def test_an_unreadable_package_json_starts_nothing(tmp_path: Path, raw: bytes, note: str) -> None:
    (tmp_path / "package.json").write_bytes(raw)
    (tmp_path / "server.js").write_text(_SERVER)
    facts = inspect_module(tmp_path, "node")
    assert facts.start is None  # npm could not read it either: no guess
    assert len(facts.notes) == 1
    assert facts.notes[0].startswith(note)


def test_a_huge_package_json_is_not_read(tmp_path: Path) -> None:
    pad = " " * 1_100_000
    (tmp_path / "package.json").write_text('{"main": "server.js",' + pad + '"name": "x"}')
    (tmp_path / "server.js").write_text(_SERVER)
    facts = inspect_module(tmp_path, "node")
    assert facts.start is None
    size = (tmp_path / "package.json").stat().st_size
    assert facts.notes == [f"package.json is {size} bytes (over 1 MB): not read"]


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-32"])
def test_a_bom_or_utf16_package_json_is_read(tmp_path: Path, encoding: str) -> None:
    text = json.dumps({"name": "web", "scripts": {"start": "node app.js"}})
    (tmp_path / "package.json").write_bytes(text.encode(encoding))
    (tmp_path / "app.js").write_text(_SERVER)
    facts = inspect_module(tmp_path, "node")
    assert facts.start is not None
    assert facts.start.command(3000) == ["node", "app.js"]
    assert facts.notes == []


def test_wrong_types_are_ignored_with_a_reason(tmp_path: Path) -> None:
    pkg = {
        "main": 5,
        "bin": ["cli.js"],
        "scripts": [],
        "dependencies": "express",
        "devDependencies": None,
        "engines": "node 20",
    }
    facts = inspect_module(_repo(tmp_path, pkg, {"index.js": _SERVER}), "node")
    assert facts.start is not None
    assert facts.start.command(3000) == ["node", "index.js"]  # npm's own fallback
    assert facts.notes == [
        "package.json scripts is an array, not an object: ignored",
        "package.json main is a number, not a path: ignored",
        "package.json bin is an array, not an object: ignored",
        "package.json dependencies is a string, not an object: ignored",
    ]


def test_a_start_script_of_the_wrong_type_or_unparsable(tmp_path: Path) -> None:
    pkg = {"scripts": {"start": {"cmd": "node x.js"}, "dev": "node 'x.js"}}
    start, notes = _run(_repo(tmp_path, pkg, {"app.js": _SERVER}))
    assert start == ["node", "app.js"]
    assert notes == ["package.json scripts.start is an object: ignored"]
    pkg = {"scripts": {"start": "node 'x.js"}}
    start, notes = _run(_repo(tmp_path, pkg, {"app.js": _SERVER}))
    assert start == ["node", "app.js"]
    assert notes == ["scripts.start cannot be parsed (unbalanced quotes): ignored"]


def test_read_package_keeps_only_strings(tmp_path: Path) -> None:
    _repo(tmp_path, {"scripts": {"start": "node a.js", "build": 3}, "bin": {"a": "a.js", "b": 1}})
    pkg = read_package(tmp_path)
    assert pkg.scripts == {"start": "node a.js"}
    assert pkg.bin == {"a": "a.js"}
    assert pkg.problems == [
        "package.json scripts.build is a number: ignored",
        "package.json bin.b is a number: ignored",
    ]


def test_a_missing_package_json_is_a_reason(tmp_path: Path) -> None:
    assert read_package(tmp_path).problems[0].startswith("package.json cannot be read")


def test_a_start_tool_the_image_prunes_is_named(tmp_path: Path) -> None:
    """gothinkster/node-express-realworld-example-app@30b68e1e881462b2f4164ea09ab4c4f5699c7b0b:
    ``start: nx serve`` with nx a devDependency (``npm prune --omit=dev`` removes it)."""
    pkg = {
        "scripts": {"start": "nx serve", "build": "nx build", "test": "nx test"},
        "dependencies": {"express": "^4.18.2"},
        "devDependencies": {"nx": "17.2.8"},
    }
    start, notes = _run(_repo(tmp_path, pkg, {"src/main.ts": _SERVER}))
    assert start == ["npm", "start"]
    assert notes == [
        "package.json start runs nx, a devDependency the image prunes: "
        "declare a production start (`start:prod: node <file>`)"
    ]


def test_the_repository_expose_wins_over_the_framework_default(tmp_path: Path) -> None:
    """edwinhern/express-typescript-2024@c6ddcba066a89b9703ebc84052d4b68ba75145c8: express,
    the port from the environment (``.env.template`` ``PORT="8080"``), ``EXPOSE 8080``."""
    pkg = {"scripts": {"build": "tsup", "start:prod": "node dist/index.js"}}
    pkg |= {"dependencies": {"express": "^4.21.2"}}
    files = {"src/index.ts": "server.listen(env.PORT);\n", "Dockerfile": "EXPOSE 8080\n"}
    assert inspect_module(_repo(tmp_path, pkg, files), "node").port == 8080


def test_branching_chains_are_bounded(tmp_path: Path) -> None:
    """Each script runs the next one fifty times: 50**8 paths if followed naively."""
    scripts = {f"s{i}": " && ".join([f"npm run s{i + 1}"] * 50) for i in range(MAX_DEPTH)}
    pkg = {"scripts": {**scripts, "start": "npm run s0", f"s{MAX_DEPTH}": "node x.js"}}
    facts = inspect_module(_repo(tmp_path, pkg, {"index.js": _SERVER}), "node")
    assert facts.start is not None
    assert facts.start.command(None) == ["node", "index.js"]
    assert f"scripts: over {MAX_RESOLUTIONS} script runs to follow: ignored" in facts.notes


def test_exec_in_a_script_is_a_wrapper(tmp_path: Path) -> None:
    pkg = {"scripts": {"start": "exec node --enable-source-maps server.js"}}
    start = _run(_repo(tmp_path, pkg, {"server.js": _SERVER}))[0]
    assert start == ["node", "--enable-source-maps", "server.js"]


@pytest.mark.parametrize(
    "body",
    ['"\\"' * 200_000, "/*x" * 200_000, '"' * 400_001],
    ids=["escaped-quotes", "open-comments", "odd-quotes"],
)
def test_a_pathological_tsconfig_is_read_in_one_pass(tmp_path: Path, body: str) -> None:
    """Unclosed strings and comments: one scan each (quadratic, this took hours)."""
    pkg = {"scripts": {"start": "ts-node src/index.ts", "build": "tsc"}}
    files = {"src/index.ts": _SERVER, "tsconfig.json": body}
    assert _run(_repo(tmp_path, pkg, files))[0] == ["node", "src/index.js"]  # no outDir


_WORDS = st.sampled_from(
    [
        "node",
        "nodemon",
        "ts-node",
        "tsx",
        "npm",
        "run",
        "yarn",
        "pnpm",
        "start",
        "serve",
        "a",
        "-r",
        "--exec",
        "--",
        "&&",
        ";",
        "|",
        "NODE_ENV=production",
        "cross-env",
        ".",
        "server.js",
        "../x.js",
        "/etc/passwd",
        "~/x.js",
        "src/index.ts",
        "dist/main",
        "'",
        '"',
        "$(id)",
        "-e",
        "x.js",
        "--require=./p.js",
        "watch",
        "exec",
        "npx",
    ]
)
_SCRIPT = st.lists(_WORDS, max_size=8).map(" ".join)
_VALUE = st.one_of(
    st.none(),
    st.integers(),
    st.booleans(),
    _SCRIPT,
    st.lists(_SCRIPT, max_size=2),
    st.dictionaries(st.sampled_from(["a", "web", "x"]), _SCRIPT, max_size=2),
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    scripts=st.one_of(
        st.dictionaries(st.sampled_from(["start", "serve", "a", "build", "start:prod"]), _SCRIPT),
        _VALUE,
    ),
    main=_VALUE,
    bin_=_VALUE,
)
def test_any_package_json_gives_a_start_inside_the_project_or_none(
    tmp_path: Path, scripts: object, main: object, bin_: object
) -> None:
    repo = tmp_path / "p"
    repo.mkdir(exist_ok=True)
    for rel in ("server.js", "x.js", "src/index.ts", "p.js"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("")
    (repo / "package.json").write_text(json.dumps({"scripts": scripts, "main": main, "bin": bin_}))
    facts = inspect_module(repo, "node")
    if facts.start is None or facts.start.argv[0] != "node":
        return
    for arg in facts.start.argv[1:]:
        path = arg.split("=", 1)[1] if arg.startswith("--require=") else arg
        if arg.startswith("--") and not arg.startswith("--require="):
            continue
        assert not path.startswith(("/", "~", "-")), facts.start.argv
        assert ".." not in Path(path).parts, facts.start.argv


def test_a_module_map_entry_named_like_an_option_stays_a_file(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"name": "web"}, {"--inspect=0.0.0.0.js": _SERVER, "index.js": ""})
    module_map = ModuleMap(
        modules=[
            Module(name="web", path=".", language="node", kind="job", entry="--inspect=0.0.0.0.js")
        ]
    )
    assert propose(repo, module_map).modules[0].start == ["node", "./--inspect=0.0.0.0.js"]
