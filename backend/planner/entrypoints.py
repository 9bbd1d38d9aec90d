"""Start commands from what the repository itself declares.

The order is "most explicit first": a Procfile ``web:`` line, then the framework's own
convention (Django's ``manage.py``/``<project>.wsgi``, an ASGI/WSGI app object), then the
manifest (``[project.scripts]``), then a ``__main__`` script (Node's order: see
:mod:`backend.planner.node_entry`). Files that only exercise the server (tests, clients,
benchmarks, examples) are never an entry point, and every file a command names must exist
(or be produced by the module's build script). A command is a template: ``{port}`` is filled in by
the Dockerfile builder, because a module map may give another port than the one detected.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from backend.planner.manifest_files import read_text as _read

PORT = "{port}"

# Names that exercise a server rather than being one.
_NOT_ENTRY = re.compile(
    r"(^|[/_.-])(tests?|client|clients|bench(mark)?s?|examples?|demo|conftest|setup|"
    r"noxfile|fabfile|tasks|docs?|scripts?|migrations?|lint|fmt|gen|generate|tools?)"
    r"([/_.-]|$)",
    re.IGNORECASE,
)
_SERVER_NAME = re.compile(r"server|serve|web|api|app|main|daemon|svc|service|wsgi|asgi", re.I)


@dataclass(frozen=True)
class Start:
    """How a module starts."""

    argv: tuple[str, ...]
    entry: str
    """Short form for the module map: ``app.main:app``, ``bin/www``, ``./cmd/server``."""
    source: str
    """What declared it: ``Procfile web``, ``manage.py (Django)``, ``package.json start``."""
    default_port: int | None = None
    """The framework's port when the code names none (None: not a server by convention)."""

    def command(self, port: int | None) -> list[str]:
        """The argv with ``{port}`` filled in."""
        value = str(port or self.default_port or "")
        return [a.replace(PORT, value) for a in self.argv]


def not_entry(rel: str) -> bool:
    """A test, client, example or tooling file: never the module's entry point."""
    return bool(_NOT_ENTRY.search(rel.removesuffix(".py").removesuffix(".go")))


def rank(name: str) -> tuple[int, str]:
    """Sort key: server-like names first, then by name (deterministic)."""
    return (0 if _SERVER_NAME.search(name) else 1, name)


# --- Procfile ------------------------------------------------------------------------------


def procfile_web(path: Path, default_port: int | None) -> Start | None:
    """The ``web:`` process of a Procfile, with ``$PORT`` bound to the module's port."""
    text = _read(path / "Procfile")
    m = re.search(r"^web:\s*(.+)$", text, re.MULTILINE)
    if not m:
        return None
    command = re.sub(r"\$\{?PORT\}?", PORT, m.group(1).strip())
    if re.search(r"[$&|;<>`]", command):
        argv: tuple[str, ...] = ("sh", "-c", f"exec {command}")
    else:
        argv = tuple(shlex.split(command))
    return Start(argv, command, "Procfile web", default_port)


# --- Python --------------------------------------------------------------------------------


def python_start(
    path: Path, sources: dict[str, str], deps: set[str], project: dict
) -> Start | None:
    """The Python module's start command (see the module docstring for the order)."""
    default = 5000 if "flask" in deps and not deps & {"fastapi", "django"} else 8000
    return (
        procfile_web(path, default)
        or _django(path, deps)
        or _app_object(sources, deps)
        or _project_script(project)
        or _main_script(sources)
    )


def _django(path: Path, deps: set[str]) -> Start | None:
    manage = _read(path / "manage.py")
    if not manage:
        return None
    m = re.search(r"DJANGO_SETTINGS_MODULE[\"']\s*,\s*[\"']([\w.]+)[\"']", manage)
    project = m.group(1).split(".")[0] if m else None
    if project and (path / project / "wsgi.py").is_file() and "gunicorn" in deps:
        target = f"{project}.wsgi:application"
        gunicorn = ("gunicorn", target, "--bind", f"0.0.0.0:{PORT}")
        return Start(gunicorn, target, "manage.py (Django) + gunicorn", 8000)
    runserver = ("python", "manage.py", "runserver", f"0.0.0.0:{PORT}", "--noreload")
    return Start(runserver, "manage.py runserver", "manage.py (Django)", 8000)


_ASGI = re.compile(r"^(\w+)\s*=\s*(?:fastapi\.|starlette\.applications\.)?(FastAPI|Starlette)\(")
_FLASK = re.compile(r"^(\w+)\s*=\s*(?:flask\.)?Flask\(", re.MULTILINE)


def _module_name(rel: str) -> str:
    module = rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    return module.removeprefix("src.")


def _app_object(sources: dict[str, str], deps: set[str]) -> Start | None:
    candidates = sorted(
        (rel for rel in sources if not not_entry(rel)),
        key=lambda rel: (rel.count("/"), rank(PurePosixPath(rel).name)),
    )
    for rel in candidates:
        text = sources[rel]
        m = re.search(_ASGI.pattern, text, re.MULTILINE)
        if m:
            target = f"{_module_name(rel)}:{m.group(1)}"
            uvicorn = ("uvicorn", target, "--host", "0.0.0.0", "--port", PORT)
            return Start(uvicorn, target, f"{m.group(2)} app in {rel}", 8000)
    for rel in candidates:
        text = sources[rel]
        m = _FLASK.search(text)
        factory = "def create_app(" in text and "Flask" in text
        if not (m or factory):
            continue
        target = f"{_module_name(rel)}:{m.group(1) if m else 'create_app()'}"
        source = f"Flask app in {rel}"
        if "gunicorn" in deps:
            return Start(("gunicorn", "--bind", f"0.0.0.0:{PORT}", target), target, source, 5000)
        if m and re.search(r"\.run\([^)]*host\s*=\s*[\"']0\.0\.0\.0", text) and "/" not in rel:
            # The repository's own `python app.py` already listens on every interface.
            return Start(("python", rel), rel, f"{source} (__main__)", 5000)
        argv = ("flask", "--app", target, "run", "--host", "0.0.0.0", "--port", PORT)
        return Start(argv, target, source, 5000)
    return None


def _project_script(project: dict) -> Start | None:
    scripts = project.get("scripts")
    if not isinstance(scripts, dict) or not scripts:
        return None
    names = [n for n in scripts if not not_entry(str(n))] or []
    if not names:
        return None
    own = str(project.get("name") or "")
    name = min(names, key=lambda n: (n != own and not _SERVER_NAME.search(n), n))
    return Start((name,), f"script:{name}", f"[project.scripts] {name}")


def _main_script(sources: dict[str, str]) -> Start | None:
    scripts = [
        rel
        for rel, text in sources.items()
        if "/" not in rel
        and rel != "manage.py"
        and not not_entry(rel)
        and '__name__ == "__main__"' in text.replace("'", '"')
    ]
    if not scripts:
        return None
    rel = min(scripts, key=rank)
    return Start(("python", rel), rel, f"__main__ in {rel}")
