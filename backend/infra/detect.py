"""Detect modules from manifests: language, entry point, port and kind.

The heuristics are deliberately simple and each one is tested on a sample repository:
a port comes from explicit code (``listen(3000``, ``ListenAndServe(":8080"``,
``server.port=8081``, ``uvicorn.run(..., port=8000)``, ``EXPOSE``) before a framework
default (FastAPI/uvicorn 8000, Flask 5000, Express 3000, Spring Boot 8080).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from backend.module_map import Kind, Language, Module, ModuleMap

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
    ("pyproject.toml", "python"),
    ("requirements.txt", "python"),
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
    scripts: set[str] = field(default_factory=set)
    """Node: the ``scripts`` of package.json."""
    language_version: str | None = None
    artifact: str | None = None
    """Java: ``artifactId-version.jar``; Rust: the binary name; Go: the main package path."""
    deps: set[str] = field(default_factory=set)

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
    facts.language_version = _first_version(str(project.get("requires-python", "")))
    for rel, text in sources.items():
        m = re.search(r"^(\w+)\s*=\s*(?:fastapi\.)?(FastAPI|Starlette)\(", text, re.MULTILINE)
        if m and facts.entry is None:
            module = rel[:-3].replace("/", ".")
            module = module.removeprefix("src.")
            facts.entry = f"{module}:{m.group(1)}"
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
        main_guard = '__name__ == "__main__"' in text.replace("'", '"')
        if facts.entry is None and main_guard and "/" not in rel:
            facts.entry = rel
    scripts = project.get("scripts", {})
    if facts.entry is None and isinstance(scripts, dict) and scripts:
        facts.entry = f"script:{next(iter(scripts))}"
    if facts.port is None:
        if deps & {"fastapi", "uvicorn", "starlette", "django"} and facts.entry:
            facts.port = 8000
        elif "flask" in deps and facts.entry:
            facts.port = 5000


def _inspect_node(path: Path, facts: ModuleFacts, sources: dict[str, str]) -> None:
    for lock in ("package-lock.json", "yarn.lock", "pnpm-lock.yaml"):
        if (path / lock).is_file():
            facts.lockfile = lock
            break
    pkg = _json(path / "package.json")
    scripts = pkg.get("scripts") or {}
    facts.deps = set(pkg.get("dependencies") or {})
    facts.scripts = set(scripts)
    facts.build_script = "build" in scripts
    facts.language_version = _first_version(str((pkg.get("engines") or {}).get("node", "")))
    start = str(scripts.get("start", ""))
    m = re.search(r"\bnode\s+(?:--\S+\s+)*([\w./-]+\.(?:c|m)?js)\b", start)
    if m:
        facts.entry = m.group(1).removeprefix("./")
    elif isinstance(pkg.get("main"), str):
        facts.entry = pkg["main"].removeprefix("./")
    elif (path / "index.js").is_file():
        facts.entry = "index.js"
    for text in sources.values():
        port = _search_port(
            text,
            [
                r"PORT\s*(?:\|\||\?\?)\s*(\d{2,5})",
                r"\.listen\(\s*(\d{2,5})",
                r"port\s*[:=]\s*(\d{2,5})",
            ],
        )
        if port:
            facts.port = port
            break
    if (
        facts.port is None
        and facts.deps & {"express", "fastify", "koa", "@hapi/hapi"}
        and facts.entry
    ):
        facts.port = 3000


def _inspect_go(path: Path, facts: ModuleFacts, sources: dict[str, str]) -> None:
    gomod = _read(path / "go.mod")
    m = re.search(r"^go\s+(\d+\.\d+)", gomod, re.MULTILINE)
    facts.language_version = m.group(1) if m else None
    facts.lockfile = "go.sum" if (path / "go.sum").is_file() else None
    for rel, text in sorted(sources.items()):
        if re.search(r"^package\s+main\b", text, re.MULTILINE) and "func main()" in text:
            parent = Path(rel).parent.as_posix()
            facts.artifact = "." if parent == "." else f"./{parent}"
            facts.entry = facts.artifact
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
    without_parent = re.sub(r"<parent>[\s\S]*?</parent>", "", pom)
    without_deps = re.sub(r"<dependencies>[\s\S]*?</dependencies>", "", without_parent)
    artifact = re.search(r"<artifactId>([^<]+)</artifactId>", without_deps)
    version = re.search(r"<version>([^<$]+)</version>", without_deps)
    if artifact and version:
        facts.artifact = f"{artifact.group(1).strip()}-{version.group(1).strip()}.jar"
    java = re.search(r"<(?:java\.version|maven\.compiler\.release)>(\d+)<", pom)
    facts.language_version = java.group(1) if java else None
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
    facts.lockfile = "Cargo.lock" if (path / "Cargo.lock").is_file() else None
    bins = cargo.get("bin") or []
    name = bins[0].get("name") if bins else (cargo.get("package") or {}).get("name")
    facts.artifact = str(name) if name else None
    if "src/main.rs" in sources or bins:
        facts.entry = facts.artifact
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


def _first_version(spec: str) -> str | None:
    m = re.search(r"(\d+(?:\.\d+)?)", spec)
    return m.group(1) if m else None


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


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _toml(path: Path) -> dict:
    try:
        return tomllib.loads(_read(path)) if path.is_file() else {}
    except tomllib.TOMLDecodeError:
        return {}


def _json(path: Path) -> dict:
    try:
        data = json.loads(_read(path) or "{}")
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}
