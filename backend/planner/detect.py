"""Detect modules from manifests: language, entry point, port and kind.

The heuristics are deliberately simple and each one is tested on a sample repository:
a port comes from explicit code (``listen(3000``, ``ListenAndServe(":8080"``,
``server.port=8081``, ``uvicorn.run(..., port=8000)``, ``EXPOSE``) before a framework
default (FastAPI/uvicorn 8000, Flask 5000, Express 3000, Spring Boot 8080).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from backend.module_map import Kind, Language, Module, ModuleMap
from backend.planner.entrypoints import Start, not_entry, python_start, rank
from backend.planner.gradle import GradleBuild, gradle_build
from backend.planner.manifest_files import read_text as _read
from backend.planner.manifest_files import read_toml as _toml
from backend.planner.node_entry import node_entry, read_package
from backend.planner.runtimes import (
    Runtime,
    go_runtime,
    node_runtime,
    python_runtime,
    rust_runtime,
)

SKIP_DIRS = frozenset(
    {
        ".git",
        "node_modules",
        "vendor",
        ".venv",
        "venv",
        "__pycache__",
        ".tox",
        "target",
        "dist",
        "build",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".idea",
        ".gradle",
    }
)
# Order decides the language when one directory holds several manifests: a package.json
# next to a go.mod is usually front-end tooling, not the module itself.
_MANIFESTS: tuple[tuple[str, Language], ...] = (
    ("go.mod", "go"),
    ("Cargo.toml", "rust"),
    ("pom.xml", "java"),
    ("build.gradle.kts", "java"),
    ("build.gradle", "java"),
    ("pyproject.toml", "python"),
    ("requirements.txt", "python"),
    ("setup.py", "python"),
    ("package.json", "node"),
)
_SOURCE_EXT: dict[Language, tuple[str, ...]] = {
    "python": (".py",),
    "node": (".js", ".mjs", ".cjs", ".ts"),
    "go": (".go",),
    "java": (".java", ".properties", ".yml", ".yaml"),
    "rust": (".rs",),
}
_MAX_SOURCE_BYTES = 256_000
_MAX_SOURCE_FILES = 400


@dataclass
class ModuleFacts:
    """What the planner needs to know about one module directory."""

    language: Language
    port: int | None = None
    entry: str | None = None
    lockfile: str | None = None
    """``package-lock.json`` / ``yarn.lock`` / ``pnpm-lock.yaml`` / ``poetry.lock`` /
    ``Cargo.lock``."""
    has_requirements: bool = False
    has_pyproject: bool = False
    build_script: bool = False
    build_command: str | None = None
    """Node: the compile step the image runs when the package has no build script."""
    scripts: set[str] = field(default_factory=set)
    """Node: the ``scripts`` of package.json."""
    language_version: str | None = None
    artifact: str | None = None
    """Java: ``artifactId-version.jar``; Rust: the binary name; Go: the main package path."""
    deps: set[str] = field(default_factory=set)
    gradle: GradleBuild | None = None
    """Java: the Gradle build, when the module has no pom.xml."""
    start: Start | None = None
    """How the module starts (its argv), from what the repository declares."""
    runtime: Runtime | None = None
    """The language runtime the manifests ask for, and its image."""
    notes: list[str] = field(default_factory=list)
    """What the planner could not honour: shown to the operator, never dropped."""

    @property
    def kind(self) -> Kind:
        """A module that listens is a service; one with an entry point a job; else a library."""
        if self.port is not None:
            return "service"
        return "job" if self.entry else "library"


def detect_modules(repo: Path) -> ModuleMap:
    """Walk ``repo`` and return one module per directory holding a known manifest."""
    found: list[tuple[str, Language]] = []
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        names = set(filenames)
        for manifest, language in _MANIFESTS:
            if manifest in names:
                rel = Path(dirpath).relative_to(repo).as_posix()
                found.append((rel or ".", language))
                break
    modules: list[Module] = []
    used: set[str] = set()
    for rel, language in found:
        facts = inspect_module(repo / rel, language)
        name = _unique_name(_slug(repo.resolve().name if rel == "." else Path(rel).name), used)
        modules.append(
            Module(
                name=name,
                path=rel,
                language=language,
                kind=facts.kind,
                port=facts.port,
                entry=facts.entry,
            )
        )
    return ModuleMap(modules=modules)


def inspect_module(path: Path, language: Language) -> ModuleFacts:
    """Collect the facts of one module directory for ``language``."""
    facts = ModuleFacts(language=language)
    sources = _read_sources(path, _SOURCE_EXT[language])
    inspector = {
        "python": _inspect_python,
        "node": _inspect_node,
        "go": _inspect_go,
        "java": _inspect_java,
        "rust": _inspect_rust,
    }[language]
    inspector(path, facts, sources)
    if facts.start is not None and facts.entry is None:
        facts.entry = facts.start.entry
    if facts.runtime is not None:
        facts.language_version = facts.runtime.version
        if facts.runtime.note:
            facts.notes.append(facts.runtime.note)
    if facts.port is None:
        facts.port = _port_from_dockerfile(path)
    return facts


# --- per language -----------------------------------------------------------------------


def _inspect_python(path: Path, facts: ModuleFacts, sources: dict[str, str]) -> None:
    facts.has_requirements = (path / "requirements.txt").is_file()
    facts.has_pyproject = (path / "pyproject.toml").is_file()
    facts.lockfile = "poetry.lock" if (path / "poetry.lock").is_file() else None
    deps = _python_deps(path)
    facts.deps = deps
    project = _toml(path / "pyproject.toml").get("project", {})
    facts.runtime = python_runtime(path, project)
    facts.start = python_start(path, sources, deps, project)
    for rel, text in sources.items():
        if not_entry(rel):
            continue
        port = _search_port(
            text,
            [
                r"uvicorn\.run\([^)]*port\s*=\s*(\d{2,5})",
                r"\.run\([^)]*port\s*=\s*(\d{2,5})",
                r"[\"']PORT[\"']\s*,\s*[\"']?(\d{2,5})",
            ],
        )
        if port and facts.port is None:
            facts.port = port
    if facts.start is not None and facts.port is None:
        facts.port = facts.start.default_port


def _inspect_node(path: Path, facts: ModuleFacts, sources: dict[str, str]) -> None:
    for lock in ("package-lock.json", "yarn.lock", "pnpm-lock.yaml"):
        if (path / lock).is_file():
            facts.lockfile = lock
            break
    pkg = read_package(path)
    facts.deps = pkg.dependencies
    facts.scripts = set(pkg.scripts)
    facts.build_script = "build" in pkg.scripts
    facts.runtime = node_runtime(path, pkg.data)
    found = node_entry(path, pkg, sources)
    facts.start, facts.notes, facts.build_command = found.start, found.notes, found.compile
    entry = facts.start.entry if facts.start else ""
    if entry and entry not in sources and (path / entry).is_file():
        sources = {entry: _read(path / entry), **sources}  # `bin/www` has no extension
    for rel, text in sources.items():
        if not_entry(rel):
            continue
        port = _search_port(
            text,
            [
                r"PORT\s*(?:\|\||\?\?)\s*[\"']?(\d{2,5})",
                r"\.listen\(\s*(\d{2,5})",
                r"port\s*[:=]\s*(\d{2,5})",
            ],
        )
        if port:
            facts.port = port
            break
    if facts.port is None and facts.start and facts.start.source == "Procfile web":
        facts.port = facts.start.default_port
    if facts.port is None and facts.start:
        # The repository's own EXPOSE is more explicit than the framework's default.
        facts.port = _port_from_dockerfile(path)
    if (
        facts.port is None
        and facts.deps & {"express", "fastify", "koa", "@hapi/hapi", "next"}
        and facts.start
    ):
        facts.port = 3000
    if facts.start is None:
        facts.port = None  # nothing to start: a port in some file is no service


def _inspect_go(path: Path, facts: ModuleFacts, sources: dict[str, str]) -> None:
    facts.runtime = go_runtime(_read(path / "go.mod"))
    facts.lockfile = "go.sum" if (path / "go.sum").is_file() else None
    mains = sorted(
        {
            Path(rel).parent.as_posix()
            for rel, text in sources.items()
            if not rel.endswith("_test.go")
            and re.search(r"^package\s+main\b", text, re.MULTILINE)
            and "func main()" in text
        }
    )
    servers = [d for d in mains if not not_entry(d)]
    if servers:
        module_line = re.search(r"^module\s+(\S+)", _read(path / "go.mod"), re.MULTILINE)
        own = module_line.group(1).rsplit("/", 1)[-1] if module_line else path.resolve().name
        # `cmd/<module name>` is the Go convention for a repository's own binary.
        pick = min(servers, key=lambda d: (Path(d).name != own, d != ".", rank(Path(d).name)))
        facts.artifact = "." if pick == "." else f"./{pick}"
        facts.entry = facts.artifact
        facts.start = Start(("/app/app",), facts.artifact, f"package main in {facts.artifact}")
        others = [f"./{d}" for d in mains if d != pick]
        if others:
            facts.notes.append(
                f"built {facts.artifact}; other main packages not deployed: {', '.join(others)}"
            )
    for rel, text in sorted(sources.items()):
        if not_entry(rel) or rel.endswith("_test.go"):
            continue
        port = _search_port(
            text,
            [
                r"ListenAndServe(?:TLS)?\(\s*\"[\w.]*:(\d{2,5})\"",
                r"Addr:\s*\"[\w.]*:(\d{2,5})\"",
                r"Listen\(\s*\"tcp\d?\"\s*,\s*\"[\w.]*:(\d{2,5})\"",
                r"\.Run\(\s*\"[\w.]*:(\d{2,5})\"",
                r"Getenv\(\"PORT\"\)[\s\S]{0,120}?\"(\d{2,5})\"",
            ],
        )
        if port and facts.port is None:
            facts.port = port


def _inspect_java(path: Path, facts: ModuleFacts, sources: dict[str, str]) -> None:
    pom = _read(path / "pom.xml")
    gradle = None if pom else gradle_build(path)
    if gradle is not None:
        facts.gradle = gradle
        pom = "spring-boot spring-boot-starter-web" if gradle.spring_web else ""
    without_parent = re.sub(r"<parent>[\s\S]*?</parent>", "", pom)
    without_deps = re.sub(r"<dependencies>[\s\S]*?</dependencies>", "", without_parent)
    artifact = re.search(r"<artifactId>([^<]+)</artifactId>", without_deps)
    version = re.search(r"<version>([^<$]+)</version>", without_deps)
    if artifact and version:
        facts.artifact = f"{artifact.group(1).strip()}-{version.group(1).strip()}.jar"
    java = re.search(r"<(?:java\.version|maven\.compiler\.release)>(\d+)<", pom)
    facts.language_version = gradle.java_version if gradle else java.group(1) if java else None
    if facts.language_version and int(facts.language_version) > 21:
        facts.notes.append(f"Java {facts.language_version}: no pinned JDK that new; built with 21")
    spring = "spring-boot" in pom
    for rel, text in sources.items():
        if rel.endswith(".java") and re.search(r"public\s+static\s+void\s+main\s*\(", text):
            facts.entry = rel
        if rel.endswith(".properties"):
            port = _search_port(text, [r"^\s*server\.port\s*[=:]\s*(\d{2,5})"])
        elif rel.endswith((".yml", ".yaml")):
            port = _search_port(text, [r"^server:\s*\n(?:\s+.*\n)*?\s+port:\s*(\d{2,5})"])
        else:
            port = None
        if port:
            facts.port = port
    if facts.port is None and spring and "spring-boot-starter-web" in pom and facts.entry:
        facts.port = 8080


def _inspect_rust(path: Path, facts: ModuleFacts, sources: dict[str, str]) -> None:
    cargo = _toml(path / "Cargo.toml")
    facts.runtime = rust_runtime(path, cargo)
    facts.lockfile = "Cargo.lock" if (path / "Cargo.lock").is_file() else None
    package = str((cargo.get("package") or {}).get("name") or "")
    bins = [str(b.get("name")) for b in cargo.get("bin") or [] if b.get("name")]
    bins += [Path(rel).stem for rel in sources if re.fullmatch(r"src/bin/[\w-]+\.rs", rel)]
    if "src/main.rs" in sources and package:
        bins.append(package)
    servers = sorted({b for b in bins if not not_entry(b)})
    if servers:
        facts.artifact = min(servers, key=lambda b: (b != package, rank(b)))
        facts.entry = facts.artifact
        facts.start = Start(("/app/app",), facts.artifact, f"binary {facts.artifact}")
    else:
        facts.artifact = package or None
    for text in sources.values():
        port = _search_port(
            text,
            [
                r"bind\(\s*\"[\w.]*:(\d{2,5})\"",
                r"bind\(\s*\(\s*\"[\w.]+\"\s*,\s*(\d{2,5})\s*\)",
                r"SocketAddr::from\(\([^)]*\],\s*(\d{2,5})\)\)",
            ],
        )
        if port:
            facts.port = port
            break


# --- helpers ----------------------------------------------------------------------------


def _search_port(text: str, patterns: list[str]) -> int | None:
    for pattern in patterns:
        m = re.search(pattern, text, re.MULTILINE)
        if m and 1 <= int(m.group(1)) <= 65535:
            return int(m.group(1))
    return None


def _port_from_dockerfile(path: Path) -> int | None:
    m = re.search(
        r"^\s*EXPOSE\s+(\d{2,5})", _read(path / "Dockerfile"), re.MULTILINE | re.IGNORECASE
    )
    return int(m.group(1)) if m else None


def _read_sources(path: Path, exts: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(path):
        here = Path(dirpath)
        # Another module's manifest marks a separate module: don't read its code as ours.
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS
            and not d.startswith(".")
            and d not in {"test", "tests"}
            and not any((here / d / m).is_file() for m, _ in _MANIFESTS)
        )
        for name in sorted(filenames):
            if name.endswith(exts) and len(out) < _MAX_SOURCE_FILES:
                file = here / name
                if file.stat().st_size <= _MAX_SOURCE_BYTES:
                    out[file.relative_to(path).as_posix()] = _read(file)
    return out


def _python_deps(path: Path) -> set[str]:
    names: list[str] = []
    project = _toml(path / "pyproject.toml")
    names += list(project.get("project", {}).get("dependencies", []))
    poetry = project.get("tool", {}).get("poetry", {}).get("dependencies", {})
    names += list(poetry)
    names += _read(path / "requirements.txt").splitlines()
    deps = set()
    for raw in names:
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", raw)
        if m and not raw.lstrip().startswith(("#", "-")):
            deps.add(m.group(1).lower())
    return deps


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return slug[:63] or "app"


def _unique_name(name: str, used: set[str]) -> str:
    candidate, n = name, 2
    while candidate in used:
        candidate = f"{name}-{n}"
        n += 1
    used.add(candidate)
    return candidate
