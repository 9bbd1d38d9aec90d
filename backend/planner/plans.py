"""The rule-based planner: the Infra agent's offline default "model".

:func:`plan` inspects each module and proposes one Dockerfile per deployable module (at
the module's path), ``compose.yaml`` at the root and ``.github/workflows/ci.yml``;
:func:`correct` (see :mod:`backend.planner.fixer`) fixes what gate findings name. An
LLM provider can replace this planner through the same two calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from backend.exceptions import ValidationError
from backend.module_map import Module, ModuleMap, load_module_map
from backend.planner.detect import ModuleFacts, detect_modules, inspect_module
from backend.planner.dockerfiles import dockerfile, dockerignore, java_version
from backend.planner.fixer import correct
from backend.planner.unsupported import Skipped, skipped_modules

__all__ = ["COMPOSE_PATH", "WORKFLOW_PATH", "Plan", "correct", "module_file", "plan", "propose"]

COMPOSE_PATH = "compose.yaml"
WORKFLOW_PATH = ".github/workflows/ci.yml"

# Real commit SHAs of the official actions (tag in the trailing comment): a moved tag
# cannot change what CI runs.
ACTIONS = {
    "checkout": "actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683  # v4.2.2",
    "python": "actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065  # v5.6.0",
    "node": "actions/setup-node@39370e3970a6d050c480ffad4ff0ed4d3fdee5af  # v4.1.0",
    "go": "actions/setup-go@3041bf56c941b39c61721a86cd11f3bb1338122a  # v5.2.0",
    "java": "actions/setup-java@7a6d8a8234af8eb26422e24e3006232cccaa061b  # v4.6.0",
}


def module_file(module: Module, name: str) -> str:
    """``name`` inside the module's directory, as a repository-relative POSIX path."""
    return (PurePosixPath(module.path) / name).as_posix() if module.path != "." else name


def resolve_module_map(repo: Path, module_map: ModuleMap | Path | None = None) -> ModuleMap:
    """The map to plan with: the given one, one loaded from a path, or detected from ``repo``."""
    if isinstance(module_map, ModuleMap):
        return module_map
    if isinstance(module_map, Path):
        return load_module_map(module_map)
    return detect_modules(repo)


@dataclass(frozen=True)
class ModulePlan:
    """What the proposal does with one module: how it starts, on what, on which port."""

    module: Module
    start: list[str] | None
    """The container's command (None for a library, or the Java ENTRYPOINT)."""
    start_source: str | None
    runtime: str | None
    """The image carrying the runtime the manifests ask for (``python:3.12.4-slim-bookworm``,
    Go's and Rust's build image), None for a library."""
    runtime_source: str | None
    host_port: int | None
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Plan:
    """The proposed files and everything the operator must know about them."""

    files: dict[str, str]
    modules: list[ModulePlan]
    skipped: list[Skipped]
    """Manifests the plan does not follow: reported, never dropped silently."""

    @property
    def notes(self) -> list[str]:
        """Every note, prefixed with its module."""
        return [f"{m.module.name}: {n}" for m in self.modules for n in m.notes]


def plan(repo: Path, module_map: ModuleMap | Path | None = None) -> dict[str, str]:
    """Propose the infra files for ``repo`` (see :func:`propose`); path → content."""
    return propose(repo, module_map).files


def propose(repo: Path, module_map: ModuleMap | Path | None = None) -> Plan:
    """Propose the infra files for ``repo``.

    Args:
        repo: the repository root (only read).
        module_map: a map, a path to a map file, or ``None`` to detect from manifests.

    Returns:
        The files (repository-relative POSIX path → content), what each module runs, and
        the manifests left out.

    Raises:
        ValidationError: ``repo`` is not a directory, the map is invalid, a module path does
            not exist, or no module was found.
    """
    if not repo.is_dir():
        raise ValidationError(f"repository {repo} is not a directory", repo=str(repo))
    modules = resolve_module_map(repo, module_map).modules
    skipped = skipped_modules(repo, {m.path for m in modules})
    if not modules:
        found = "; ".join(str(s) for s in skipped)
        raise ValidationError(
            f"no module found in {repo} (no known manifest{': ' + found if found else ''})",
            repo=str(repo),
        )
    facts: dict[str, ModuleFacts] = {}
    for module in modules:
        directory = repo / module.path
        if not directory.is_dir():
            raise ValidationError(
                f"module {module.name!r}: path {module.path!r} is not a directory in {repo}",
                module=module.name,
            )
        facts[module.name] = inspect_module(directory, module.language)
    files: dict[str, str] = {}
    deployable = [m for m in modules if m.kind != "library"]
    for module in deployable:
        files[module_file(module, "Dockerfile")] = dockerfile(module, facts[module.name])
        files[module_file(module, ".dockerignore")] = dockerignore(module)
    host_ports = _host_ports(deployable)
    if deployable:
        files[COMPOSE_PATH] = compose(deployable, host_ports, skipped)
    files[WORKFLOW_PATH] = workflow(modules, facts, repo)
    plans = []
    for module in modules:
        f = facts[module.name]
        notes = list(f.notes)
        host = host_ports.get(module.name)
        if host is not None and host != module.port:
            notes.append(f"port {module.port} is taken on the host: published on {host}")
        docker = files.get(module_file(module, "Dockerfile"), "")
        library = module.kind == "library"
        plans.append(
            ModulePlan(
                module=module,
                start=_argv(docker),
                start_source=None if library or f.start is None else f.start.source,
                runtime=None
                if library
                else _runtime_image(files[module_file(module, "Dockerfile")]),
                runtime_source=None if f.runtime is None else f.runtime.source,
                host_port=host,
                notes=notes,
            )
        )
    return Plan(files=files, modules=plans, skipped=skipped)


def _argv(text: str) -> list[str] | None:
    for line in reversed(text.splitlines()):
        if line.startswith(("CMD [", "ENTRYPOINT [")):
            return list(json.loads(line.split(" ", 1)[1]))
    return None


def _runtime_image(text: str) -> str | None:
    images = [line.split()[1] for line in text.splitlines() if line.startswith("FROM ")]
    return images[-1] if images else None


def _host_ports(modules: list[Module]) -> dict[str, int]:
    """A distinct host port per published service: the module's own port when free, else
    the next free one (two services on 8000 cannot both bind 127.0.0.1:8000)."""
    taken: set[int] = set()
    out: dict[str, int] = {}
    for module in modules:
        if module.kind != "service" or module.port is None:
            continue
        port = module.port
        while port in taken:
            port = port + 1 if port < 65535 else 1024
        taken.add(port)
        out[module.name] = port
    return out


def compose(
    modules: list[Module],
    host_ports: dict[str, int] | None = None,
    skipped: list[Skipped] | None = None,
) -> str:
    """``compose.yaml``: hardened services; ports published on the host's loopback only,
    one host port per service; the manifests left out are named in its header."""
    host_ports = _host_ports(modules) if host_ports is None else host_ports
    lines = [
        "# Generated by the Cadência Infra planner.",
        "# Ports are published on 127.0.0.1 only; expose wider on purpose, behind a proxy.",
    ]
    if skipped:
        lines.append("# Not planned (add them by hand):")
        lines += [f"#   {s}" for s in skipped]
    lines.append("services:")
    for module in modules:
        context = "." if module.path == "." else f"./{module.path}"
        lines += [
            f"  {module.name}:",
            "    build:",
            f"      context: {context}",
            "      dockerfile: Dockerfile",
            f"    restart: {'unless-stopped' if module.kind == 'service' else 'on-failure'}",
        ]
        if module.kind == "service" and module.port is not None:
            lines += [
                "    ports:",
                f'      - "127.0.0.1:{host_ports.get(module.name, module.port)}:{module.port}"',
                "    environment:",
                f'      PORT: "{module.port}"',
            ]
        lines += [
            "    read_only: true",
            "    tmpfs:",
            "      - /tmp",
            "    security_opt:",
            '      - "no-new-privileges:true"',
            "    cap_drop:",
            "      - ALL",
        ]
    return "\n".join(lines) + "\n"


def workflow(modules: list[Module], facts: dict[str, ModuleFacts], repo: Path) -> str:
    """``.github/workflows/ci.yml``: least permissions, pinned actions, one job per module."""
    lines = [
        "# Generated by the Cadência Infra planner.",
        "name: ci",
        "",
        "on: [push, pull_request]",
        "",
        "permissions:",
        "  contents: read",
        "",
        "jobs:",
    ]
    for module in modules:
        lines += _job(module, facts[module.name], repo / module.path)
    images = [m for m in modules if m.kind != "library"]
    if images:
        lines += [
            "  images:",
            "    name: build images",
            "    runs-on: ubuntu-24.04",
            "    timeout-minutes: 30",
            f"    needs: [{', '.join(_job_id(m) for m in modules)}]",
            "    steps:",
            f"      - uses: {ACTIONS['checkout']}",
            "        with:",
            "          persist-credentials: false",
        ]
        for module in images:
            lines += [
                f"      - name: Build {module.name} image",
                f"        run: docker build --pull -t {module.name}:ci {module.path}",
            ]
    return "\n".join(lines) + "\n"


def _job_id(module: Module) -> str:
    return module.name if module.name[0].isalpha() else f"m-{module.name}"


def _job(module: Module, facts: ModuleFacts, directory: Path) -> list[str]:
    head = [
        f"  {_job_id(module)}:",
        f"    name: {module.name} ({module.language})",
        "    runs-on: ubuntu-24.04",
        "    timeout-minutes: 20",
        "    defaults:",
        "      run:",
        f"        working-directory: {module.path}",
        "    steps:",
        f"      - uses: {ACTIONS['checkout']}",
        "        with:",
        "          persist-credentials: false",
    ]
    return head + _language_steps(module, facts, directory)


def _step(name: str, run: str) -> list[str]:
    return [f"      - name: {name}", f"        run: {run}"]


def _language_steps(module: Module, facts: ModuleFacts, directory: Path) -> list[str]:
    path = module.path
    if module.language == "python":
        version = facts.language_version or "3.11"  # the Dockerfile's version too
        steps = [
            f"      - uses: {ACTIONS['python']}",
            "        with:",
            f'          python-version: "{version}"',
        ]
        install = (
            "python -m pip install --no-cache-dir -r requirements.txt"
            if facts.has_requirements
            else "python -m pip install --no-cache-dir ."
        )
        steps += _step("Install", install)
        if (directory / "tests").is_dir() or any(directory.glob("test_*.py")):
            steps += _step(
                "Test", "python -m pip install --no-cache-dir pytest==8.2.2 && python -m pytest -q"
            )
        else:
            steps += _step("Compile", "python -m compileall -q .")
        return steps
    if module.language == "node":
        steps = [
            f"      - uses: {ACTIONS['node']}",
            "        with:",
            f'          node-version: "{facts.language_version or "20"}"',
        ]
        if facts.lockfile == "package-lock.json":
            steps += [
                "          cache: npm",
                f"          cache-dependency-path: {_in(path, 'package-lock.json')}",
            ]
            steps += _step("Install", "npm ci --no-audit --no-fund")
        elif facts.lockfile == "yarn.lock":
            steps += _step("Install", "yarn install --frozen-lockfile --non-interactive")
        elif facts.lockfile == "pnpm-lock.yaml":
            steps += _step("Install", "corepack enable pnpm && pnpm install --frozen-lockfile")
        else:
            steps += _step("Install", "npm install --no-audit --no-fund")
        runner = {"yarn.lock": "yarn run", "pnpm-lock.yaml": "pnpm run"}.get(
            facts.lockfile or "", "npm run"
        )
        if facts.build_script:
            steps += _step("Build", f"{runner} build")
        elif facts.build_command:
            steps += _step("Build", facts.build_command)
        if "test" in facts.scripts:
            steps += _step("Test", f"{runner} test")
        return steps
    if module.language == "go":
        steps = [
            f"      - uses: {ACTIONS['go']}",
            "        with:",
            f"          go-version-file: {_in(path, 'go.mod')}",
        ]
        if facts.lockfile == "go.sum":
            steps.append(f"          cache-dependency-path: {_in(path, 'go.sum')}")
        steps += _step("Vet", "go vet ./...")
        steps += _step("Test", "go test ./...")
        return steps
    if module.language == "java":
        gradle = facts.gradle
        steps = [
            f"      - uses: {ACTIONS['java']}",
            "        with:",
            "          distribution: temurin",
            f'          java-version: "{java_version(facts)}"',
            f"          cache: {'gradle' if gradle else 'maven'}",
        ]
        if gradle is not None:
            tool = "./gradlew" if gradle.wrapper else "gradle"
            return steps + _step("Build and test", f"{tool} --no-daemon build")
        return steps + _step("Build and test", "mvn -B verify")
    locked = " --locked" if facts.lockfile == "Cargo.lock" else ""
    return _step("Test", f"cargo test{locked}") + _step("Build", f"cargo build --release{locked}")


def _in(path: str, name: str) -> str:
    return name if path == "." else f"{path}/{name}"
