"""A Node module's entry point from its package.json, read as untrusted input.

Order, most explicit first: a Procfile ``web:`` line; ``scripts.start`` (what ``npm start``
runs) followed through ``npm run``/``yarn``/``pnpm`` chains, its last command being the
server, unless it is missing or a development tool (nodemon, ts-node, ``nest start``) and a
production script (``start:prod``...) runs ``node <file>``; npm's default ``node server.js``;
``main`` (what ``node .`` loads); ``bin``; conventional names. TypeScript/Babel sources map
to the build output (tsconfig ``outDir``/``rootDir``, ``babel -d``, ``esbuild --outfile``).
Every path is normalized and must stay inside the project; a refused one is a note.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from backend.planner.entrypoints import Start, procfile_web, rank
from backend.planner.manifest_files import read_text

MAX_PACKAGE_BYTES = 1_000_000
"""A real package.json is a few kB; a larger one is not read (and not guessed from)."""
MAX_DEPTH = 8
"""How many ``npm run`` hops a start script may take before the planner gives up."""
MAX_RESOLUTIONS = 256
"""How many scripts one module's resolution may read in all (chains may branch)."""
PROD_SCRIPTS = ("start:prod", "start:production", "prod", "production", "serve")
BUILD_DIRS = frozenset({"dist", "build", "out", "lib", ".next"})
CONVENTIONAL = (
    "server.js",
    "app.js",
    "index.js",
    "server.mjs",
    "index.mjs",
    "src/server.js",
    "src/app.js",
    "src/index.js",
    "bin/www",
)
_TS = (".ts", ".tsx", ".mts", ".cts")
_TOOL_PACKAGES = {"nest": "@nestjs/cli", "vue-cli-service": "@vue/cli-service"}
_WRAPPERS = frozenset({"env", "cross-env", "cross-env-shell", "exec"})
_SEPARATORS = frozenset({"&&", "||", ";", "&", ";;"})
_EVAL = frozenset({"-e", "--eval", "-p", "--print", "-c", "--check", "-i", "--interactive"})
_PRELOAD = frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader"})
_NODE_VALUE = _PRELOAD | {"--env-file", "-C", "--conditions", "--input-type", "--title"}
# Node options that change how the server runs and need nothing the image lacks.
_KEPT_FLAGS = frozenset(
    {
        "--enable-source-maps",
        "--max-old-space-size",
        "--max-http-header-size",
        "--no-warnings",
        "--unhandled-rejections",
        "--dns-result-order",
        "--experimental-specifier-resolution",
    }
)
_TS_NODE_VALUE = {"-r", "--require", "-P", "--project", "-C", "--compiler", "-O"}
_TS_NODE_VALUE |= {"--compiler-options", "-I", "--ignore", "--cwd", "--scope-dir", "-D"}
# runner → its options that take a separate value. `node`-like runners accept node's own.
_RUNNERS: dict[str, frozenset[str]] = {
    "node": _NODE_VALUE,
    "nodemon": _NODE_VALUE
    | {"-w", "--watch", "-e", "--ext", "-i", "--ignore", "-x", "--exec"}
    | {"-d", "--delay", "--signal", "--config"},
    "node-dev": _NODE_VALUE | {"--ignore", "--deps"},
    "supervisor": frozenset({"-w", "--watch", "-i", "--ignore", "-e", "--extensions", "-x"})
    | {"--exec", "-p", "--poll-interval"},
    "pm2-runtime": frozenset({"-i", "--instances", "--name", "-n", "--env", "--node-args"}),
    "ts-node": frozenset(_TS_NODE_VALUE),
    "ts-node-esm": frozenset(_TS_NODE_VALUE),
    "ts-node-dev": frozenset(_TS_NODE_VALUE | {"--ignore-watch", "--watch", "--debounce"}),
    "tsnd": frozenset(_TS_NODE_VALUE | {"--ignore-watch", "--watch", "--debounce"}),
    "tsx": frozenset({"--tsconfig", "--ignore", "--include", "--import", "-r", "--require"}),
    "esno": frozenset({"--tsconfig", "--import", "-r", "--require"}),
    "babel-node": frozenset({"--presets", "--plugins", "-x", "--extensions", "--config-file"})
    | {"-r", "--require", "--only", "--ignore"},
}
_NODE_LIKE = frozenset({"node", "nodemon", "node-dev", "supervisor"})
_TRANSPILERS = frozenset({"ts-node", "ts-node-esm", "ts-node-dev", "tsnd", "tsx", "esno"})
_TRANSPILERS |= {"babel-node"}
_TRANSPILING_PRELOAD = re.compile(
    r"^(ts-node(/.*)?|tsx(/.*)?|@babel/register|babel-register|@swc/register|@swc-node/register"
    r"|@esbuild-kit/\S+|tsconfig-paths/register)$"
)


@dataclass
class Package:
    """The package.json fields the planner reads, each of the type npm expects (else empty
    with a problem saying why)."""

    data: dict = field(default_factory=dict)
    name: str = ""
    scripts: dict[str, str] = field(default_factory=dict)
    main: str | None = None
    bin: dict[str, str] = field(default_factory=dict)
    dependencies: set[str] = field(default_factory=set)
    dev_dependencies: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)


def _json_type(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")


def read_package(path: Path) -> Package:
    """Read ``path/package.json`` defensively: never raises, never keeps a wrong type.

    Args:
        path: the module directory.

    Returns:
        The fields of the expected types; ``problems`` names what was ignored and why.
    """
    file = path / "package.json"
    try:
        size = file.stat().st_size
        if size > MAX_PACKAGE_BYTES:
            return Package(problems=[f"package.json is {size} bytes (over 1 MB): not read"])
        raw = file.read_bytes()
    except OSError as exc:
        return Package(problems=[f"package.json cannot be read ({exc.strerror or exc})"])
    try:
        data = json.loads(raw)  # UTF-8 with or without a BOM, UTF-16 and UTF-32
    except RecursionError:
        return Package(problems=["package.json nests too deeply: not read"])
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8/16/32 text"
        return Package(problems=[f"package.json is not valid JSON ({reason}): not read"])
    if not isinstance(data, dict):
        return Package(problems=[f"package.json is {_json_type(data)}, not an object: not read"])
    pkg = Package(data=data)
    name = data.get("name")
    pkg.name = name if isinstance(name, str) else ""
    pkg.scripts = _string_map(data, "scripts", pkg.problems)
    main = data.get("main")
    if isinstance(main, str) and main.strip():
        pkg.main = main
    elif main is not None:
        pkg.problems.append(f"package.json main is {_json_type(main)}, not a path: ignored")
    bin_ = data.get("bin")
    if isinstance(bin_, str) and bin_.strip():
        pkg.bin = {pkg.name.rsplit("/", 1)[-1] or PurePosixPath(bin_).stem: bin_}
    elif bin_ is not None:
        pkg.bin = _string_map(data, "bin", pkg.problems)
    pkg.dependencies = set(_string_map(data, "dependencies", pkg.problems))
    pkg.dev_dependencies = set(_string_map(data, "devDependencies", pkg.problems))
    return pkg


def _string_map(data: dict, key: str, problems: list[str]) -> dict[str, str]:
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"package.json {key} is {_json_type(value)}, not an object: ignored")
        return {}
    out: dict[str, str] = {}
    for name, item in value.items():
        if isinstance(item, str):
            out[name] = item
        else:
            problems.append(f"package.json {key}.{name} is {_json_type(item)}: ignored")
    return out


def inside(path: Path, raw: str) -> tuple[str | None, str]:
    """``raw`` as a normalized path relative to the project, or None and why it is refused.

    Args:
        path: the project (module) directory.
        raw: a path as package.json or a script writes it.

    Returns:
        ``(relative POSIX path, "")`` or ``(None, reason)``.
    """
    text = raw.strip()
    if not text or "\x00" in text or len(text) > 1024:
        return None, "not a usable path"
    if text.startswith("~"):
        return None, "a home-directory path"
    if text.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", text):
        return None, "an absolute path"
    if "\\" in text or "$" in text or "%" in text:
        return None, "not a plain relative path"
    rel = posixpath.normpath(text)
    if rel == ".." or rel.startswith("../"):
        return None, "outside the project"
    try:
        (path / rel).resolve().relative_to(path.resolve())
    except ValueError:
        return None, "a link out of the project"
    except OSError:
        return None, "not a usable path"
    return rel, ""


# --- script commands --------------------------------------------------------------------


@dataclass(frozen=True)
class Launch:
    """A script command that runs one file with Node (or a tool wrapping it)."""

    runner: str
    file: str
    preloads: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    via: tuple[str, ...] = ()

    @property
    def transpiled(self) -> bool:
        """The file is compiled at run time (ts-node, tsx, babel-node, a ``-r`` hook)."""
        return (
            self.runner in _TRANSPILERS
            or self.file.endswith(_TS)
            or any(_TRANSPILING_PRELOAD.match(p) for p in self.preloads)
        )

    @property
    def dev(self) -> bool:
        """Run through a development tool (watcher or run-time compiler), not plain node."""
        return self.runner != "node" or self.transpiled


@dataclass(frozen=True)
class Opaque:
    """A script command the planner does not run itself (``next start``): ``npm start``."""

    command: str
    via: tuple[str, ...] = ()


Found = Launch | Opaque | None


def words_of(command: str) -> list[str] | None:
    """Shell words of a script, the way ``sh`` splits them.

    Args:
        command: a ``scripts`` entry.

    Returns:
        The words (operators ``&&``, ``;``, ``|`` are words of their own), or None when the
        quotes do not balance.
    """
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return None


def segments_of(words: list[str]) -> list[list[str]]:
    """The commands of a chain.

    Args:
        words: from :func:`words_of`.

    Returns:
        One word list per command of ``&&``/``||``/``;``/``&``; a pipeline or redirection
        keeps only its first command (the server; ``| pino-pretty`` only formats its logs).
    """
    out: list[list[str]] = [[]]
    for word in words:
        if word in _SEPARATORS:
            out.append([])
        else:
            out[-1].append(word)
    cut = []
    for segment in out:
        stop = next((i for i, w in enumerate(segment) if set(w) <= set("|<>&")), len(segment))
        if segment[:stop]:
            cut.append(segment[:stop])
    return cut


@dataclass
class _Context:
    path: Path
    pkg: Package
    notes: list[str]
    sources: dict[str, str]
    resolutions: int = 0


def _resolve_script(ctx: _Context, name: str, via: tuple[str, ...] = ()) -> Found:
    """What ``npm run <name>`` ends up running: its last command, chains followed."""
    if name in via:
        ctx.notes.append(f"scripts {' → '.join((*via, name))} loops: ignored")
        return None
    ctx.resolutions += 1
    if ctx.resolutions > MAX_RESOLUTIONS:
        if ctx.resolutions == MAX_RESOLUTIONS + 1:
            ctx.notes.append(f"scripts: over {MAX_RESOLUTIONS} script runs to follow: ignored")
        return None
    if len(via) >= MAX_DEPTH:
        ctx.notes.append(f"scripts {' → '.join(via)}: over {MAX_DEPTH} hops: ignored")
        return None
    command = ctx.pkg.scripts.get(name)
    if command is None:
        if via:
            ctx.notes.append(f"scripts.{via[-1]} runs script {name!r}, which does not exist")
        return None
    words = words_of(command)
    if words is None:
        ctx.notes.append(f"scripts.{name} cannot be parsed (unbalanced quotes): ignored")
        return None
    segments = segments_of(words)
    if not segments:
        return None
    chain = (*via, name)
    for step in segments[:-1]:
        if isinstance(_command(ctx, step, chain, 0), Launch):
            ctx.notes.append(
                f"scripts.{name} runs `{shlex.join(step)}` before the server: "
                "not in the image's command"
            )
    return _command(ctx, segments[-1], chain, 0)


def _strip_wrappers(words: list[str]) -> list[str]:
    """Drop env assignments, ``env``, ``cross-env``, ``exec``, ``npx`` and ``dotenv --``."""
    while words:
        head = words[0]
        if re.match(r"^[A-Za-z_]\w*=", head) or head in _WRAPPERS:
            words = words[1:]
        elif head == "npx" or words[:2] in (["npm", "exec"], ["pnpm", "exec"], ["yarn", "exec"]):
            words = words[1 if head == "npx" else 2 :]
            while words and words[0].startswith("-"):
                words = words[2:] if words[0] in {"-p", "--package"} else words[1:]
        elif head in {"dotenv", "dotenv-cli"} and "--" in words:
            words = words[words.index("--") + 1 :]
        else:
            return words
    return words


def _script_call(words: list[str], scripts: dict[str, str]) -> tuple[str | None, list[str]]:
    """``npm run x`` → ("x", []); ``yarn tsx f`` → (None, ["tsx", "f"]); else (None, words)."""
    head = words[0]
    if head not in {"npm", "yarn", "pnpm", "bun"}:
        return None, words
    rest = [w for w in words[1:] if not w.startswith("-")]
    if "--" in words:  # arguments passed on to the script
        rest = [w for w in words[1 : words.index("--")] if not w.startswith("-")]
    if not rest:
        return None, [] if head != "npm" else words
    sub = rest[0]
    if sub in {"start", "test", "t", "restart", "stop"}:
        return ("test" if sub == "t" else sub), []
    if sub in {"run", "run-script", "rum", "urn"}:
        return (rest[1] if len(rest) > 1 else None), []
    if head in {"yarn", "pnpm", "bun"}:
        if sub in scripts:
            return sub, []
        return None, words[words.index(sub) :] if head != "bun" else words
    return None, words


def _command(ctx: _Context, words: list[str], via: tuple[str, ...], depth: int) -> Found:
    words = _strip_wrappers(words)
    if not words or depth > MAX_DEPTH:
        return None
    if any("$(" in w or "`" in w for w in words) or words[0] in {"(", "{"}:
        return Opaque(shlex.join(words), via)
    script, rest = _script_call(words, ctx.pkg.scripts)
    if script is not None:
        return _resolve_script(ctx, script, via)
    if rest is not words:
        return _command(ctx, rest, via, depth + 1) if rest else None
    runner = PurePosixPath(words[0]).name
    if runner not in _RUNNERS:
        return Opaque(shlex.join(words), via)
    return _launch(ctx, runner, words, via, depth)


def _launch(
    ctx: _Context, runner: str, words: list[str], via: tuple[str, ...], depth: int
) -> Found:
    value_options = _RUNNERS[runner]
    preloads: list[str] = []
    flags: list[str] = []
    positional: list[str] = []
    execute: str | None = None
    i = 2 if words[1:2] in (["watch"], ["start"]) and runner in {"tsx", "pm2-runtime"} else 1
    while i < len(words):
        word = words[i]
        if word == "--":
            positional = words[i + 1 :]
            break
        if not word.startswith("-") or word == "-":
            positional = words[i:]
            break
        name, eq, value = word.partition("=")
        if name in _EVAL and runner in _NODE_LIKE - {"nodemon", "supervisor"}:
            return Opaque(shlex.join(words), via)  # `node -e ...` runs no file
        if name in value_options and not eq:
            value = words[i + 1] if i + 1 < len(words) else ""
            i += 1
        if name in _PRELOAD and runner != "pm2-runtime":
            preloads.append(value)
        elif name in {"-x", "--exec"} and runner in {"nodemon", "supervisor"}:
            execute = value
        elif name in _KEPT_FLAGS and runner in _NODE_LIKE:
            flags.append(word if eq or name not in value_options else f"{name}={value}")
        i += 1
    file = positional[0] if positional else ""
    if execute is not None:
        inner_words = words_of(execute) or []
        inner = _command(ctx, [*inner_words, *([file] if file else [])], via, depth + 1)
        if isinstance(inner, Launch):
            return Launch(inner.runner, inner.file, (*preloads, *inner.preloads), inner.flags, via)
        return inner
    if not file and runner == "nodemon":
        # nodemon without a script runs nodemon.json's `exec`, else package.json main.
        configured = _jsonc(_small_text(ctx.path / "nodemon.json")).get("exec")
        if isinstance(configured, str) and configured.strip():
            return _command(ctx, words_of(configured) or [], via, depth + 1)
        file = ctx.pkg.main or ""
    if not file or file == ".":
        if file == "." and ctx.pkg.main:
            file = ctx.pkg.main  # `node .` loads main
        else:
            return Opaque(shlex.join(words), via)
    if runner == "pm2-runtime" and re.search(r"ecosystem|\.config\.[cm]?js$|\.(json|ya?ml)$", file):
        return Opaque(shlex.join(words), via)
    return Launch(runner, file, tuple(preloads), tuple(flags), via)


# --- from a command to the image's start ------------------------------------------------


@dataclass
class NodeEntry:
    """How the Node module starts, what the image must compile first, and what was refused."""

    start: Start | None
    notes: list[str]
    compile: str | None = None
    """A compile step when the package has no build script (``tsc -p tsconfig.json``)."""

    def __post_init__(self) -> None:
        self.notes = list(dict.fromkeys(self.notes))  # a script read twice says it once


def node_entry(path: Path, pkg: Package, sources: dict[str, str]) -> NodeEntry:
    """The Node module's start command (see the module docstring for the order).

    Args:
        path: the module directory (only read).
        pkg: its package.json, from :func:`read_package`.
        sources: the module's source files (relative path → text), for tsconfig's root.

    Returns:
        The start (None when nothing runnable is declared) and notes on what was refused.
    """
    ctx = _Context(path, pkg, list(pkg.problems), sources)
    procfile = procfile_web(path, 3000)
    if procfile:
        return NodeEntry(procfile, ctx.notes)
    if not pkg.data:
        return NodeEntry(None, ctx.notes)  # unreadable: npm could not start it either
    found = _resolve_script(ctx, "start") if "start" in pkg.scripts else None
    if not isinstance(found, Launch) or found.dev:
        for name in PROD_SCRIPTS:
            prod = _resolve_script(ctx, name) if name in pkg.scripts else None
            if isinstance(prod, Launch) and not prod.dev:
                entry = _from_launch(ctx, prod, f"package.json {name}")
                if entry is not None:
                    return entry
    if isinstance(found, Launch):
        entry = _from_launch(ctx, found, "package.json start")
        if entry is not None:
            return entry
    elif isinstance(found, Opaque):
        _pruned_tool(ctx, found)
        return NodeEntry(Start(("npm", "start"), "npm start", "package.json start"), ctx.notes)
    elif "start" not in pkg.scripts and _own_file(path, "server.js"):
        # `npm start` without a start script runs `node server.js`.
        return NodeEntry(Start(("node", "server.js"), "server.js", "npm start default"), ctx.notes)
    if pkg.main is not None:
        entry = _from_launch(ctx, Launch("node", pkg.main), "package.json main")
        if entry is not None:
            return entry
    if pkg.bin:
        own = pkg.name.rsplit("/", 1)[-1]
        name = min(pkg.bin, key=lambda n: (n != own, rank(n)))
        entry = _from_launch(ctx, Launch("node", pkg.bin[name]), f"package.json bin {name}")
        if entry is not None:
            return entry
    for name in CONVENTIONAL:
        if _own_file(path, name):
            return NodeEntry(Start(("node", name), name, f"{name} (convention)"), ctx.notes)
    return NodeEntry(None, ctx.notes)


def _pruned_tool(ctx: _Context, found: Opaque) -> None:
    """Say so when ``npm start`` runs a tool the image prunes (``nx serve``, ``nest start``)."""
    tool = PurePosixPath((words_of(found.command) or [""])[0]).name
    package = _TOOL_PACKAGES.get(tool, tool)
    if package in ctx.pkg.dev_dependencies and package not in ctx.pkg.dependencies:
        ctx.notes.append(
            f"package.json start runs {tool}, a devDependency the image prunes: "
            "declare a production start (`start:prod: node <file>`)"
        )


def _own_file(path: Path, rel: str) -> bool:
    """A file of the project (not a link out of it)."""
    return inside(path, rel)[0] is not None and (path / rel).is_file()


def _described(launch: Launch, origin: str) -> str:
    hops = " → ".join(launch.via[1:])
    return f"{origin} (via {hops})" if hops else origin


def _from_launch(ctx: _Context, launch: Launch, origin: str) -> NodeEntry | None:
    source = _described(launch, origin)
    rel, why = inside(ctx.path, launch.file)
    if rel is None:
        ctx.notes.append(f"{source} names {launch.file!r}: {why}: refused")
        return None
    compile_step = None
    if launch.transpiled:
        src = _resolve(ctx.path, rel, (*_TS, ".js", ".mjs", ".cjs", ".jsx"))
        if src is None:
            ctx.notes.append(f"{source} runs {rel}, which does not exist")
            return None
        built, compile_step, why = _build_output(ctx, src)
        if built is None:
            ctx.notes.append(
                f"{source} compiles {src} at run time with {launch.runner}, and {why}: "
                "the image runs `npm start`, which needs the dev dependencies"
            )
            start = Start(("npm", "start"), src, f"{source}: {launch.runner} {src}")
            return NodeEntry(start, ctx.notes)
        file, source = built, f"{source}: {launch.runner} {src}, built to {built}"
    else:
        found = _resolve(ctx.path, rel, (".js", ".cjs", ".mjs"))
        if found is None and _built_path(ctx, rel):
            found = rel  # produced by the build script (`node dist/main` → dist/main.js)
            corrected = _emitted(ctx, rel)
            if corrected is not None:
                found = corrected[0]
                ctx.notes.append(f"{source} runs {rel}, but {corrected[1]}")
        if found is None:
            ctx.notes.append(f"{source.split(' (via')[0]} runs {rel}, which does not exist")
            return None
        file = found
    argv = ("node", *launch.flags, *_kept_preloads(ctx, launch), _argument(file))
    return NodeEntry(Start(argv, file, source), ctx.notes, compile_step)


def _argument(rel: str) -> str:
    """A path as node's argument: one starting with ``-`` must stay a file name."""
    return f"./{rel}" if rel.startswith("-") else rel


def _kept_preloads(ctx: _Context, launch: Launch) -> list[str]:
    """``--require=x`` for preloads the image has: a runtime dependency or a project file.
    Run-time compilers are dropped (the image runs the build output)."""
    kept = []
    for preload in launch.preloads:
        if _TRANSPILING_PRELOAD.match(preload) or preload.startswith("-"):
            continue
        if preload.startswith((".", "/")):
            rel, _ = inside(ctx.path, preload)
            if rel is not None and (ctx.path / rel).is_file():
                kept.append(f"--require=./{rel}")
            continue
        parts = preload.split("/")
        package = "/".join(parts[:2]) if preload.startswith("@") else parts[0]
        if package in ctx.pkg.dependencies:
            kept.append(f"--require={preload}")
        else:
            ctx.notes.append(
                f"preload {preload} is not a runtime dependency: dropped from the command"
            )
    return kept


def _resolve(path: Path, rel: str, extensions: tuple[str, ...]) -> str | None:
    """Node's resolution of a file argument: as written, with an extension, ``/index``."""
    candidates = [rel, *(rel + e for e in extensions), *(f"{rel}/index{e}" for e in extensions)]
    for candidate in candidates:
        try:
            if (path / candidate).is_file() and inside(path, candidate)[0] is not None:
                return posixpath.normpath(candidate)
        except OSError:
            return None
    return None


def _built_path(ctx: _Context, rel: str) -> bool:
    """``rel`` lies in what the build produces (the usual output directories, tsconfig's
    ``outDir``), and the package has a build script to produce it."""
    if "build" not in ctx.pkg.scripts:
        return False
    first = PurePosixPath(rel).parts[0]
    out = _tsconfig(ctx.path, "tsconfig.json").get("outDir")
    out_rel = inside(ctx.path, out)[0] if isinstance(out, str) else None
    return first in BUILD_DIRS or bool(out_rel and (rel + "/").startswith(out_rel + "/"))


# --- build outputs ----------------------------------------------------------------------


def _build_segments(ctx: _Context) -> list[list[str]]:
    """Every command the build script runs, ``npm run`` chains expanded (bounded)."""
    out: list[list[str]] = []
    pending = [("build", 0)]
    seen: set[str] = set()
    while pending:
        name, depth = pending.pop(0)
        if name in seen or depth > MAX_DEPTH or name not in ctx.pkg.scripts:
            continue
        seen.add(name)
        for segment in segments_of(words_of(ctx.pkg.scripts[name]) or []):
            words = _strip_wrappers(segment)
            if not words:
                continue
            script, _ = _script_call(words, ctx.pkg.scripts)
            if script is not None:
                pending.append((script, depth + 1))
            else:
                out.append(words)
    return out


def _option(words: list[str], *names: str) -> str | None:
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        if name in names:
            return value if eq else (words[i + 1] if i + 1 < len(words) else None)
    return None


def _js_name(rel: str) -> str:
    stem, ext = posixpath.splitext(rel)
    return stem + {".mts": ".mjs", ".cts": ".cjs"}.get(ext, ".js")


def _build_output(ctx: _Context, src: str) -> tuple[str | None, str | None, str]:
    """Where the build puts ``src`` compiled, a compile step when there is no build script,
    or why neither is known.

    Returns:
        ``(output path, compile step or None, "")`` or ``(None, None, reason)``.
    """
    if "build" not in ctx.pkg.scripts:
        tools = ctx.pkg.dependencies | ctx.pkg.dev_dependencies
        if src.endswith(_TS) and (ctx.path / "tsconfig.json").is_file() and "typescript" in tools:
            out, why = _tsc_output(ctx, "tsconfig.json", None, src)
            step = "./node_modules/.bin/tsc -p tsconfig.json"
            return (out, step, "") if out else (None, None, why)
        return None, None, "no build script compiles it"
    for words in _build_segments(ctx):
        tool = PurePosixPath(words[0]).name
        project = _tsc_project(ctx, words)
        if project is not None:
            out, why = _tsc_output(ctx, project[0], project[1], src)
            return (out, None, "") if out else (None, None, why)
        if tool in {"babel", "swc"}:
            out_dir = _option(words, "-d", "--out-dir")
            src_dirs = [w for w in words[1:] if not w.startswith("-") and w != out_dir]
            for src_dir in src_dirs:
                base = posixpath.normpath(src_dir)
                if out_dir and (src + "/").startswith(base + "/"):
                    mapped = posixpath.join(out_dir, posixpath.relpath(src, base))
                    return _checked(ctx, _js_name(mapped))
        if tool in {"esbuild", "tsup"}:
            outfile = _option(words, "--outfile")
            if outfile:
                return _checked(ctx, outfile)
            out_dir = _option(words, "--outdir", "-d", "--out-dir") or (
                "dist" if tool == "tsup" else None
            )
            if out_dir:
                return _checked(ctx, posixpath.join(out_dir, _js_name(PurePosixPath(src).name)))
    build = ctx.pkg.scripts["build"]
    return None, None, f"the build script ({build}) is not one the planner maps"


def _tsc_project(ctx: _Context, words: list[str]) -> tuple[str, str | None] | None:
    """The tsconfig (and ``--outDir``) of a build command running tsc or ``nest build``."""
    tool = PurePosixPath(words[0]).name
    if tool == "tsc" and not {"--noEmit", "-w", "--watch"} & set(words):
        project = _option(words, "-p", "--project") or "tsconfig.json"
        if (ctx.path / project).is_dir():
            project = posixpath.join(project, "tsconfig.json")
        return project, _option(words, "--outDir")
    if tool == "nest" and words[1:2] == ["build"]:
        build = (ctx.path / "tsconfig.build.json").is_file()
        return ("tsconfig.build.json" if build else "tsconfig.json"), None
    return None


def _emitted(ctx: _Context, rel: str) -> tuple[str, str] | None:
    """When a start runs a tsc output that tsc does not write (tsconfig ``rootDir`` names
    where sources sit): the file it does write for the one source of that name, and a note.
    """
    project = next(filter(None, (_tsc_project(ctx, w) for w in _build_segments(ctx))), None)
    if project is None or not (ctx.path / project[0]).is_file():
        return None
    if not isinstance(_tsconfig(ctx.path, project[0]).get("rootDir"), str):
        return None  # tsc's layout then depends on every input file: not second-guessed
    stem = PurePosixPath(rel).name.split(".")[0]
    outputs = {
        src: _tsc_output(ctx, project[0], project[1], src)[0]
        for src in sorted(ctx.sources)
        if src.endswith(_TS) and not src.endswith(".d.ts") and PurePosixPath(src).stem == stem
    }
    wanted = rel if rel.endswith((".js", ".mjs", ".cjs")) else f"{rel}.js"
    if wanted in outputs.values() or len(outputs) != 1:
        return None
    src, out = next(iter(outputs.items()))
    if out is None:
        return None
    return (
        out,
        f"the build (tsc, {project[0]}) writes {src} to {out}: the image runs {out}",
    )


def _checked(ctx: _Context, rel: str) -> tuple[str | None, str | None, str]:
    out, why = inside(ctx.path, rel)
    return (out, None, "") if out else (None, None, f"its build output {rel!r} is {why}")


def _tsconfig(path: Path, name: str, depth: int = 0) -> dict:
    """``compilerOptions`` (and ``include``) of a tsconfig, ``extends`` of local files
    followed; paths stay relative to the tsconfig's directory (the planner's base)."""
    rel, _ = inside(path, name)
    if rel is None or depth > 4:
        return {}
    data = _jsonc(_small_text(path / rel))
    options = data.get("compilerOptions")
    options = dict(options) if isinstance(options, dict) else {}
    base = posixpath.dirname(rel)
    for key in ("outDir", "rootDir"):
        if isinstance(options.get(key), str):
            options[key] = posixpath.normpath(posixpath.join(base, options[key]))
    include = data.get("include")
    if isinstance(include, list):
        options["include"] = [posixpath.join(base, p) for p in include if isinstance(p, str)]
    parent = data.get("extends")
    if isinstance(parent, str) and parent.startswith("."):
        target = posixpath.join(base, parent)
        target = target if target.endswith(".json") else f"{target}.json"
        return {**_tsconfig(path, target, depth + 1), **options}
    return options


def _small_text(file: Path) -> str:
    """A config file's text; ``""`` when missing or larger than a package.json may be."""
    try:
        return read_text(file) if file.stat().st_size <= MAX_PACKAGE_BYTES else ""
    except OSError:
        return ""


def _jsonc(text: str) -> dict:
    """tsconfig is JSON with comments and trailing commas."""
    # A string runs to its closing quote or to the end: one scan, never one per quote.
    string = r'("(?:\\[\s\S]|[^"\\])*(?:"|\\?\Z))'
    text = re.sub(string + r"|//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)", lambda m: m.group(1) or "", text)
    text = re.sub(string + r"|,(\s*[}\]])", lambda m: m.group(1) or m.group(2), text)
    try:
        data = json.loads(text or "{}")
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _tsc_output(
    ctx: _Context, project: str, out_dir: str | None, src: str
) -> tuple[str | None, str]:
    """tsc's output for ``src``: ``outDir`` + its path under ``rootDir`` (given, or the
    common directory of the inputs), ``.ts`` → ``.js``; next to the source without outDir."""
    if not (ctx.path / project).is_file():
        return None, f"its tsconfig {project} does not exist"
    options = _tsconfig(ctx.path, project)
    out = out_dir if out_dir is not None else options.get("outDir")
    if not isinstance(out, str):
        return _js_name(src), ""
    out_rel, why = inside(ctx.path, out)
    if out_rel is None:
        return None, f"tsconfig outDir {out!r} is {why}"
    root = options.get("rootDir")
    if not isinstance(root, str):
        root = _common_root(ctx, options.get("include"), src)
    under = posixpath.relpath(src, root)
    if under.startswith(".."):
        return None, f"{src} is outside tsconfig rootDir {root}"
    return posixpath.normpath(posixpath.join(out_rel, _js_name(under))), ""


def _common_root(ctx: _Context, include: object, src: str) -> str:
    """tsc's default rootDir: the longest common directory of the input files (those under
    ``include``'s literal prefixes when it is given)."""
    prefixes = ["."]
    if isinstance(include, list) and include:
        prefixes = []
        for pattern in include:
            literal = re.split(r"[*?{]", str(pattern), maxsplit=1)[0]
            prefixes.append(posixpath.normpath(literal or "."))
    dirs = [
        posixpath.dirname(rel) or "."
        for rel in ctx.sources
        if rel.endswith(_TS)
        and not rel.endswith(".d.ts")
        and any(p == "." or rel == p or rel.startswith(p + "/") for p in prefixes)
    ]
    dirs.append(posixpath.dirname(src) or ".")
    try:
        common = os.path.commonpath([d if d != "." else "" for d in dirs])
    except ValueError:
        return "."
    return common or "."
