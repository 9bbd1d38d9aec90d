"""A compose project as docker compose would see it: variables, ``extends`` and ``include``.

The checks in ``compose.py`` must judge what compose would run, not the text as written
(:class:`Loader` gives examples), so every scalar is interpolated the way compose does it
and ``extends``/``include`` are followed into the other files of the PR. A reference the
gate cannot follow is a finding: what cannot be read cannot be vouched for. Each value
keeps the file and line where it is written, so a finding inherited from a base file
points at that file.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Union

import yaml

Reader = Callable[[str], "str | None"]
"""Text of a PR file by its relative path, ``None`` when the PR has no such file."""

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EXPANSION = re.compile(r"(?s)([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])(.*))?")
_MAX_DEPTH = 10


@dataclass(frozen=True)
class Value:
    """One YAML value, interpolated, with where it is written.

    Attributes:
        data: a string (every scalar), a mapping or a list of values.
        file: the PR file it comes from.
        line: its 1-based line there.
    """

    data: Union[str, dict[str, Value], list[Value]]  # noqa: UP007 (recursive alias)
    file: str
    line: int

    def get(self, key: str) -> Value | None:
        """The value under ``key`` of a mapping; ``None`` otherwise."""
        return self.data.get(key) if isinstance(self.data, dict) else None

    @property
    def text(self) -> str | None:
        """The string of a scalar; ``None`` for a mapping or a list."""
        return self.data if isinstance(self.data, str) else None

    @property
    def items(self) -> list[Value]:
        """The entries of a list; a scalar counts as a one-entry list; a mapping as none."""
        if isinstance(self.data, list):
            return self.data
        return [self] if isinstance(self.data, str) else []


@dataclass(frozen=True)
class Problem:
    """Something in the project the gate could not read or follow."""

    file: str
    line: int | None
    rule: str
    message: str


@dataclass
class Project:
    """The services of one compose file, with ``extends`` resolved and ``include`` followed.

    Attributes:
        services: ``(name, service mapping)`` for every service, included files' too.
        volumes: the top-level named volumes (their ``driver_opts`` can bind a host path).
        problems: references that could not be followed, files that are not valid YAML.
    """

    services: list[tuple[str, Value]] = field(default_factory=list)
    volumes: dict[str, Value] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


def interpolate(text: str, env: dict[str, str]) -> str:
    """Expand ``$VAR``, ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}``... as compose does.

    A variable the project does not set (not in its ``.env``) takes the default of the
    expansion: that is what runs when the operator sets nothing. Without a default it
    stays written as ``${VAR}`` (its runtime value is not knowable here). ``${VAR:+alt}``
    on an unknown variable gives ``alt``, the value that can be worse. ``$$`` is a ``$``.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char != "$" or i + 1 >= n:
            out.append(char)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "{":
            end = _closing_brace(text, i + 2)
            if end is None:
                out.append(text[i:])
                break
            out.append(_expand(text[i + 2 : end], env))
            i = end + 1
        else:
            match = _NAME.match(text, i + 1)
            if match is None:
                out.append(char)
                i += 1
                continue
            name = match.group(0)
            out.append(env.get(name, "${" + name + "}"))
            i = match.end()
    return "".join(out)


def _closing_brace(text: str, start: int) -> int | None:
    depth = 1
    i = start
    while i < len(text):
        if text.startswith("${", i):
            depth += 1
            i += 2
            continue
        if text[i] == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _expand(inner: str, env: dict[str, str]) -> str:
    match = _EXPANSION.fullmatch(inner)
    if match is None:
        return "${" + inner + "}"
    name, op, arg = match.group(1), match.group(2), match.group(3) or ""
    value = env.get(name)
    if op is None or op in {":?", "?"}:
        return value if value is not None else "${" + name + "}"
    if op == ":-":
        return value if value else interpolate(arg, env)
    if op == "-":
        return value if value is not None else interpolate(arg, env)
    if op == ":+":
        return interpolate(arg, env) if value is None or value else ""
    return interpolate(arg, env)  # "+": set (even empty) or unknown


def parse_dotenv(text: str) -> dict[str, str]:
    """``KEY=value`` lines of a ``.env`` file (``export``, quotes and comments handled)."""
    env: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if value[:1] in {"'", '"'} and value.endswith(value[0]) and len(value) >= 2:
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        env[key.strip()] = value
    return env


class Loader:
    """Reads the compose files of one PR, each once, and resolves their services.

    What compose would run, not the text as written: ``"${PORT:-0.0.0.0:5432}:5432"``
    publishes on every interface when nobody sets ``PORT``, and a service that ``extends`` a
    base from another file inherits its ``privileged: true``. So every scalar is interpolated
    the way compose does it (the project's ``.env`` first, then the default of the
    expansion), and ``extends``/``include`` are followed into the other files of the PR. A
    reference the gate cannot follow (an absolute path, one leaving the PR, a remote include,
    a missing file, a cycle) is a :class:`Problem`.
    """

    def __init__(self, read: Reader) -> None:
        self._read = read
        self._docs: dict[str, Value | Problem | None] = {}

    def project(self, file: str, text: str | None = None) -> Project:
        """The services of ``file`` (read through the reader unless ``text`` is given)."""
        project = Project()
        doc = self._document(file, text)
        if isinstance(doc, Problem):
            project.problems.append(doc)
        elif doc is not None:
            self._collect(file, doc, project, (file,))
        return project

    def _collect(self, file: str, doc: Value, project: Project, chain: tuple[str, ...]) -> None:
        services = doc.get("services")
        if services is not None and isinstance(services.data, dict):
            for name, service in services.data.items():
                if isinstance(service.data, dict):
                    resolved = self._resolve(file, name, service, project, (f"{file}:{name}",))
                    project.services.append((name, resolved))
        volumes = doc.get("volumes")
        if volumes is not None and isinstance(volumes.data, dict):
            project.volumes.update(volumes.data)
        include = doc.get("include")
        for entry in include.items if include is not None else []:
            for ref in _include_paths(entry):
                target = self._follow(file, ref, "include", project)
                if target is None:
                    continue
                if target in chain or len(chain) > _MAX_DEPTH:
                    project.problems.append(_problem(ref, "compose-include-cycle", "include cycle"))
                    continue
                included = self._document(target)
                if isinstance(included, Problem):
                    project.problems.append(included)
                elif included is not None:
                    self._collect(target, included, project, (*chain, target))

    def _resolve(
        self, file: str, name: str, service: Value, project: Project, chain: tuple[str, ...]
    ) -> Value:
        """``service`` with what it ``extends`` merged in (compose's merge rules, simplified)."""
        extends = service.get("extends")
        if extends is None:
            return service
        if extends.text is not None:
            base_file, base_name = file, extends.text
        else:
            base_name = (extends.get("service") or Value("", file, extends.line)).text or ""
            ref = extends.get("file")
            if ref is None:
                base_file = file
            else:
                target = self._follow(file, ref, "extends", project)
                if target is None:
                    return _without(service, "extends")
                base_file = target
        key = f"{base_file}:{base_name}"
        if key in chain or len(chain) > _MAX_DEPTH:
            project.problems.append(
                _problem(extends, "compose-extends-cycle", f"extends cycle at {base_name!r}")
            )
            return _without(service, "extends")
        doc = self._document(base_file)
        base = None
        if isinstance(doc, Value):
            services = doc.get("services")
            base = services.get(base_name) if services is not None else None
        elif isinstance(doc, Problem):
            project.problems.append(doc)
            return _without(service, "extends")
        if base is None or not isinstance(base.data, dict):
            project.problems.append(
                _problem(
                    extends,
                    "compose-extends-unresolved",
                    f"service {name!r} extends {base_name!r}, not found in {base_file}: "
                    "what it inherits cannot be checked",
                )
            )
            return _without(service, "extends")
        resolved_base = self._resolve(base_file, base_name, base, project, (*chain, key))
        return _merge(resolved_base, _without(service, "extends"))

    def _follow(self, file: str, ref: Value, kind: str, project: Project) -> str | None:
        """The PR path ``ref`` names, relative to ``file``; a problem when it cannot be read."""
        path = (ref.text or "").strip()
        here = posixpath.dirname(file)
        target = posixpath.normpath(posixpath.join(here, path)) if path else ""
        if not path or "://" in path or path.startswith(("/", "~")) or target.startswith(".."):
            project.problems.append(
                _problem(
                    ref,
                    f"compose-{kind}-outside-pr",
                    f"{kind} {path!r} is outside this PR: what it brings in cannot be checked",
                )
            )
            return None
        if self._read(target) is None:
            project.problems.append(
                _problem(
                    ref,
                    f"compose-{kind}-outside-pr",
                    f"{kind} {path!r} names {target}, which is not in this PR: "
                    "what it brings in cannot be checked",
                )
            )
            return None
        return target

    def _document(self, file: str, text: str | None = None) -> Value | Problem | None:
        if file not in self._docs:
            source = text if text is not None else self._read(file)
            self._docs[file] = None if source is None else self._parse(file, source)
        return self._docs[file]

    def _parse(self, file: str, text: str) -> Value | Problem | None:
        try:
            root = yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            return Problem(file, line, "compose-invalid-yaml", f"not valid YAML: {exc}")
        if root is None:
            return None
        dotenv = self._read(posixpath.join(posixpath.dirname(file), ".env"))
        env = parse_dotenv(dotenv) if dotenv is not None else {}
        return _value(root, file, env)


def _include_paths(entry: Value) -> list[Value]:
    if entry.text is not None:
        return [entry]
    path = entry.get("path")
    return path.items if path is not None else []


def _value(node: yaml.Node, file: str, env: dict[str, str] | None) -> Value:
    line = int(node.start_mark.line) + 1
    if isinstance(node, yaml.MappingNode):
        return Value({str(k.value): _value(v, file, env) for k, v in _pairs(node)}, file, line)
    if isinstance(node, yaml.SequenceNode):
        return Value([_value(item, file, env) for item in node.value], file, line)
    text = str(node.value)
    return Value(text if env is None else interpolate(text, env), file, line)


def documents(text: str, file: str) -> list[Value]:
    """Every YAML document of ``text`` as values, as written (no interpolation): what a
    Kubernetes manifest holds.

    Raises:
        yaml.YAMLError: the text is not YAML.
    """
    nodes = yaml.compose_all(text, Loader=yaml.SafeLoader)
    return [_value(node, file, None) for node in nodes if node is not None]


def _pairs(node: yaml.MappingNode) -> list[tuple[yaml.Node, yaml.Node]]:
    """Key/value pairs, with ``<<: *anchor`` merge keys expanded (compose files use them)."""
    pairs: list[tuple[yaml.Node, yaml.Node]] = []
    merged: list[tuple[yaml.Node, yaml.Node]] = []
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.tag == "tag:yaml.org,2002:merge":
            sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
            for source in sources:
                if isinstance(source, yaml.MappingNode):
                    merged.extend(_pairs(source))
        else:
            pairs.append((key, value))
    own = {str(k.value) for k, _ in pairs if isinstance(k, yaml.ScalarNode)}
    return pairs + [(k, v) for k, v in merged if str(k.value) not in own]


def _merge(base: Value, own: Value) -> Value:
    """Compose's ``extends`` merge: lists add up, mappings merge, scalars are overridden."""
    if not isinstance(base.data, dict) or not isinstance(own.data, dict):
        return own
    merged = dict(base.data)
    for key, value in own.data.items():
        prior = merged.get(key)
        if prior is not None and isinstance(prior.data, list) and isinstance(value.data, list):
            merged[key] = Value(prior.data + value.data, value.file, value.line)
        elif prior is not None and isinstance(prior.data, dict) and isinstance(value.data, dict):
            merged[key] = Value({**prior.data, **value.data}, value.file, value.line)
        else:
            merged[key] = value
    return Value(merged, own.file, own.line)


def _without(service: Value, key: str) -> Value:
    if not isinstance(service.data, dict):
        return service
    return Value({k: v for k, v in service.data.items() if k != key}, service.file, service.line)


def _problem(at: Value, rule: str, message: str) -> Problem:
    return Problem(at.file, at.line, rule, message)
