"""Runtime versions from the manifests, and the pinned image that satisfies them.

A manifest states a *range* (``requires-python = ">=3.10,<3.12"``, ``engines.node =
"^18.17"``, the ``go`` directive, Cargo's ``rust-version``) or an exact toolchain
(``rust-toolchain.toml``, ``.python-version``, ``.nvmrc``, go.mod's ``toolchain``). The
planner picks the house default when it satisfies the range, else the nearest pinned image
that does; when none of the pinned images does, it names the floating ``X.Y`` tag of the
lowest version the range allows and says so in a note — never an image the manifest rules
out. Versions are compared on (major, minor): that is the precision of every image table.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from backend.planner.manifest_files import read_text as _read

Version = tuple[int, int]

PYTHON_IMAGES = {
    "3.9": "python:3.9.20-slim-bookworm",
    "3.10": "python:3.10.15-slim-bookworm",
    "3.11": "python:3.11.9-slim-bookworm",
    "3.12": "python:3.12.4-slim-bookworm",
    "3.13": "python:3.13.0-slim-bookworm",
}
NODE_IMAGES = {
    "18": "node:18.20.4-bookworm-slim",
    "20": "node:20.18.0-bookworm-slim",
    "22": "node:22.11.0-bookworm-slim",
    "24": "node:24.11.0-bookworm-slim",
}
GO_IMAGES = {
    "1.21": "golang:1.21.12-bookworm",
    "1.22": "golang:1.22.5-bookworm",
    "1.23": "golang:1.23.2-bookworm",
    "1.24": "golang:1.24.1-bookworm",
    "1.25": "golang:1.25.0-bookworm",
}
RUST_IMAGE = "rust:1.79.0-slim-bookworm"
DEFAULTS = {"python": "3.11", "node": "20", "go": "1.22"}
_FLOATING = {
    "python": "python:{v}-slim-bookworm",
    "node": "node:{v}-bookworm-slim",
    "go": "golang:{v}-bookworm",
}


@dataclass(frozen=True)
class Runtime:
    """The runtime chosen for a module and why."""

    version: str
    """``3.11``, ``20``, ``1.24``, ``1.82.0``: what CI's setup action installs too."""
    image: str
    source: str
    """Where the constraint came from (``requires-python >=3.12``), or ``default``."""
    note: str | None = None
    """Set when no pinned image satisfies the manifest."""


def parse(text: str) -> Version | None:
    """``"3.10.4"`` → ``(3, 10)``; ``"18"`` → ``(18, 0)``; None when no number."""
    m = re.search(r"(\d+)(?:\.(\d+))?", text)
    return (int(m.group(1)), int(m.group(2) or 0)) if m else None


def _label(v: Version, language: str) -> str:
    return str(v[0]) if language == "node" else f"{v[0]}.{v[1]}"


def choose(language: str, allows: Callable[[Version], bool], source: str) -> Runtime:
    """The house default if ``allows`` it, else the nearest pinned image that it allows."""
    table = {"python": PYTHON_IMAGES, "node": NODE_IMAGES, "go": GO_IMAGES}[language]
    default = DEFAULTS[language]
    keys = sorted(table, key=lambda k: parse(k) or (0, 0))
    ok = [k for k in keys if allows(parse(k) or (0, 0))]
    dv = parse(default) or (0, 0)
    if default in ok:
        return Runtime(default, table[default], source)
    newer = [k for k in ok if (parse(k) or (0, 0)) > dv]
    if ok:
        pick = newer[0] if newer else ok[-1]
        return Runtime(pick, table[pick], source)
    # Nothing pinned fits: search upwards for the lowest version the range allows.
    for major in range(dv[0], dv[0] + 40):
        for minor in range(0, 1 if language == "node" else 40):
            candidate = (major, minor) if language != "node" else (major, 0)
            if candidate > dv and allows(candidate):
                label = _label(candidate, language)
                return Runtime(
                    label,
                    _FLOATING[language].format(v=label),
                    source,
                    note=f"{source}: no pinned {language} image fits; using {label}",
                )
    return Runtime(
        default,
        table[default],
        source,
        note=f"{source}: no {language} version satisfies it; using the default {default}",
    )


# --- Python: PEP 440 specifiers on (major, minor) ---------------------------------------


def pep440_allows(spec: str) -> Callable[[Version], bool]:
    """A predicate for ``requires-python`` (``>=3.9,<3.12``, ``~=3.10``, ``==3.11.*``)."""
    clauses = [c.strip() for c in spec.split(",") if c.strip()]

    def one(clause: str, v: Version) -> bool:
        m = re.match(r"(~=|===|==|!=|<=|>=|<|>)?\s*([\d.*]+)", clause)
        if not m:
            return True
        op, raw = m.group(1) or "==", m.group(2)
        parts = raw.split(".")
        bound = parse(raw) or (0, 0)
        fixed = [int(p) for p in parts if p.isdigit()][:2]
        if op in {"==", "==="}:
            return list(v[: len(fixed)]) == fixed
        if op == "!=":
            # "!=3.9" and "!=3.9.*" rule out the 3.9 image; "!=3.9.1" does not.
            return (len(parts) > 2 and "*" not in raw) or list(v[: len(fixed)]) != fixed
        if op == "~=":
            # ~=3.10 → >=3.10,==3.*; ~=3.10.2 → >=3.10.2,==3.10.*
            return v >= bound and (v[0] == bound[0] if len(parts) == 2 else v == bound)
        if op == ">=":
            return v >= bound
        if op == ">":
            return v >= bound  # ">3.10": the 3.10 image (3.10.15) is after 3.10
        if op == "<=":
            return v <= bound
        return v < bound if len(parts) <= 2 or parts[2] in {"0", "*"} else v <= bound

    return lambda v: all(one(c, v) for c in clauses)


def python_runtime(path: Path, project: dict) -> Runtime:
    """``.python-version`` (exact) wins over ``requires-python`` (a range)."""
    pinned = _first_line(path / ".python-version")
    if pinned and parse(pinned):
        v = parse(pinned) or (0, 0)
        return choose("python", lambda c: c == v, f".python-version {pinned}")
    spec = str(project.get("requires-python") or "").strip()
    if spec:
        return choose("python", pep440_allows(spec), f"requires-python {spec}")
    return choose("python", lambda c: True, "default")


# --- Node: npm semver ranges on the major -------------------------------------------------


def semver_allows(spec: str) -> Callable[[Version], bool]:
    """A predicate for ``engines.node`` (``^18.17``, ``>=18 <21``, ``18.x || 20.x``)."""

    def comparator(token: str, v: Version) -> bool:
        m = re.match(r"(\^|~|>=|<=|>|<|=)?v?(\d+|[xX*])(?:\.(\d+|[xX*]))?", token)
        if not m:
            return True
        op = m.group(1) or ""
        if not m.group(2).isdigit():
            return True
        major = int(m.group(2))
        minor = int(m.group(3)) if m.group(3) and m.group(3).isdigit() else 0
        bound = (major, minor)
        if op in {"", "=", "^", "~"}:
            return v[0] == major  # an image of that major carries a later minor
        if op == ">=":
            return v[0] >= major
        if op == ">":
            return v[0] > major or (v[0] == major and m.group(3) is not None)
        if op == "<=":
            return v[0] <= major
        return v < bound if bound[1] else v[0] < major

    def conjunction(part: str, v: Version) -> bool:
        part = re.sub(r"(\d[\w.]*)\s+-\s+(\d[\w.]*)", r">=\1 <=\2", part)
        tokens = re.findall(r"(?:\^|~|>=|<=|>|<|=)?\s*v?[\dxX*][\w.*]*", part)
        return all(comparator(t.replace(" ", ""), v) for t in tokens)

    alternatives = [p.strip() for p in spec.split("||")]
    return lambda v: any(conjunction(p, v) for p in alternatives if p) or not any(alternatives)


def _same_major(version: Version) -> Callable[[Version], bool]:
    return lambda candidate: candidate[0] == version[0]


def node_runtime(path: Path, pkg: dict) -> Runtime:
    """``.nvmrc``/``.node-version`` (exact major) win over ``engines.node`` (a range)."""
    for name in (".nvmrc", ".node-version"):
        pinned = _first_line(path / name)
        version = parse(pinned)
        if version is not None:
            return choose("node", _same_major(version), f"{name} {pinned}")
    engines = pkg.get("engines")
    spec = str(engines.get("node") or "").strip() if isinstance(engines, dict) else ""
    if spec:
        return choose("node", semver_allows(spec), f"engines.node {spec}")
    return choose("node", lambda c: True, "default")


# --- Go and Rust --------------------------------------------------------------------------


def go_runtime(gomod: str) -> Runtime:
    """The ``toolchain`` directive exactly, else at least the ``go`` directive (to the
    patch): an older image would download a newer toolchain at build time
    (``GOTOOLCHAIN=auto``) or refuse to build."""
    toolchain = re.search(r"^toolchain\s+go(\d+\.\d+\.\d+)", gomod, re.MULTILINE)
    if toolchain:
        full = toolchain.group(1)
        return Runtime(full, f"golang:{full}-bookworm", f"toolchain go{full}")
    directive = re.search(r"^go\s+(\d+\.\d+)(?:\.(\d+))?", gomod, re.MULTILINE)
    if not directive:
        return choose("go", lambda c: True, "default")
    source = f"go {directive.group(0).split()[1]}"
    v = parse(directive.group(1)) or (0, 0)
    runtime = choose("go", lambda c: c >= v, source)
    patch = int(directive.group(2) or 0)
    image_patch = re.search(r":\d+\.\d+\.(\d+)", runtime.image)
    if runtime.version == directive.group(1) and image_patch and int(image_patch.group(1)) < patch:
        full = f"{directive.group(1)}.{patch}"
        return Runtime(full, f"golang:{full}-bookworm", source)
    return runtime


def rust_runtime(path: Path, cargo: dict) -> Runtime:
    """``rust-toolchain(.toml)`` names the exact toolchain; ``rust-version`` is a minimum."""
    channel = ""
    toolchain_toml = path / "rust-toolchain.toml"
    if toolchain_toml.is_file():
        try:
            data = tomllib.loads(toolchain_toml.read_text(encoding="utf-8", errors="replace"))
        except tomllib.TOMLDecodeError:
            data = {}
        channel = str((data.get("toolchain") or {}).get("channel") or "")
    else:
        line = _first_line(path / "rust-toolchain")
        if line.startswith("[toolchain]"):
            m = re.search(r'channel\s*=\s*"([^"]+)"', _read(path / "rust-toolchain"))
            channel = m.group(1) if m else ""
        else:
            channel = line
    exact = re.fullmatch(r"(\d+)\.(\d+)(?:\.(\d+))?", channel)
    if exact:
        full = f"{exact.group(1)}.{exact.group(2)}.{exact.group(3) or 0}"
        return Runtime(full, f"rust:{full}-slim-bookworm", f"rust-toolchain {channel}")
    default = RUST_IMAGE.split(":")[1].split("-")[0]
    note = None
    if channel and channel != "stable":
        note = f"rust-toolchain {channel}: not a pinned release; building with {default}"
    package = cargo.get("package") or {}
    msrv = str(package.get("rust-version") or "") if isinstance(package, dict) else ""
    if msrv and (parse(msrv) or (0, 0)) > (parse(default) or (0, 0)):
        v = parse(msrv) or (0, 0)
        full = f"{v[0]}.{v[1]}.0"
        return Runtime(full, f"rust:{full}-slim-bookworm", f"rust-version {msrv}", note)
    source = f"rust-version {msrv}" if msrv else ("rust-toolchain stable" if channel else "default")
    return Runtime(default, RUST_IMAGE, source, note)


def _first_line(path: Path) -> str:
    for line in _read(path).splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return line.strip()
    return ""
