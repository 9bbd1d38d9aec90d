"""The user a Dockerfile's final image runs as.

Root hides behind spellings (``0``, ``00``, ``+0``, ``0:0``, ``root:root``), behind
variables (``ARG U=root`` then ``USER $U``, ``${U:-root}``) and behind stages (the
final ``FROM build`` inherits ``build``'s ``USER``). It is also absent where a base
image already runs as non-root (distroless ``:nonroot``, Chainguard). So the user is
resolved the way BuildKit would, stage by stage, with the defaults a plain
``docker build`` uses; what cannot be resolved fails closed.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Literal

Who = Literal["root", "non-root", "unresolved"]

_VAR = re.compile(r"\$(?:\{(?P<braced>\w+)(?:(?P<op>:?[-+])(?P<word>[^}]*))?\}|(?P<bare>\w+))")
_HEREDOC = re.compile(r"<<(-?)([\"']?)([A-Za-z_][\w]*)\2")
_NUMERIC = re.compile(r"[+-]?\d+")
_DISTROLESS_NONROOT = re.compile(r"(?:^|[-_.])nonroot(?:$|[-_.])")
_CHAINGUARD_ROOT_IMAGES = frozenset({"wolfi-base", "chainguard-base", "busybox"})
"""Chainguard images documented to run as root; the others run as uid 65532."""


@dataclass(frozen=True)
class EffectiveUser:
    """Who the final image runs as, and why.

    Attributes:
        who: ``root``, ``non-root`` or ``unresolved`` (a variable with no value).
        line: 1-based line of the deciding ``USER`` (``None``: the base image decided).
        spelled: the ``USER`` value as written (``None`` when no ``USER`` decided).
        value: that value after variable expansion.
        via: the stage it was inherited from, or the base image that decided.
    """

    who: Who
    line: int | None = None
    spelled: str | None = None
    value: str | None = None
    via: str | None = None


@dataclass
class _Stage:
    user: EffectiveUser
    env: dict[str, str] = field(default_factory=dict)


def blank_heredocs(text: str) -> str:
    """Empty the bodies of ``<<EOF`` heredocs, keeping the line count.

    A heredoc body is file or script content; left in place, a line ``USER 1000`` in
    it would read as an instruction and fake a non-root image.
    """
    out: list[str] = []
    pending: list[tuple[bool, str]] = []
    for line in text.splitlines(keepends=True):
        if pending:
            strip_tabs, word = pending[0]
            body = line.rstrip("\r\n")
            if (body.lstrip("\t") if strip_tabs else body) == word:
                pending.pop(0)
            out.append("\n")
            continue
        out.append(line)
        if not line.lstrip().startswith("#"):
            pending = [(m.group(1) == "-", m.group(3)) for m in _HEREDOC.finditer(line)]
    return "".join(out)


def final_user(structure: list[dict[str, object]]) -> EffectiveUser:
    """Resolve the effective user of the last stage of a parsed Dockerfile."""
    global_args: dict[str, str | None] = {}
    stages: dict[str, _Stage] = {}
    current: _Stage | None = None
    args: dict[str, str | None] = {}
    for item in structure:
        instruction = str(item["instruction"])
        value = str(item["value"])
        line = int(str(item["startline"])) + 1
        if instruction == "FROM":
            current, alias = _enter_stage(value, global_args, stages)
            args = {}
            if alias:
                stages[alias] = current
        elif instruction == "ARG":
            for name, default in _pairs(value, allow_bare=True):
                known = {**args, **current.env} if current else dict(global_args)
                resolved = _expand(default, known) if default is not None else global_args.get(name)
                (args if current else global_args)[name] = resolved
        elif current is None:
            continue
        elif instruction == "ENV":
            for name, raw in _pairs(value, allow_bare=False):
                expanded = _expand(raw or "", {**args, **current.env})
                if expanded is not None:
                    current.env[name] = expanded
        elif instruction == "USER":
            expanded = _expand(value.strip(), {**args, **current.env})
            current.user = EffectiveUser(
                who=_judge(expanded), line=line, spelled=value.strip(), value=expanded
            )
    return current.user if current else EffectiveUser(who="root")


def _enter_stage(
    value: str, global_args: dict[str, str | None], stages: dict[str, _Stage]
) -> tuple[_Stage, str | None]:
    words = [w for w in value.split() if not w.startswith("--")]
    image = _expand(words[0], global_args) if words else None
    alias = words[2].lower() if len(words) >= 3 and words[1].lower() == "as" else None
    parent = stages.get(image.lower()) if image else None
    if parent is not None:
        inherited = parent.user
        via = inherited.via or image
        return _Stage(user=_with_via(inherited, via), env=dict(parent.env)), alias
    who: Who = "non-root" if image and runs_as_nonroot(image) else "root"
    return _Stage(user=EffectiveUser(who=who, via=image)), alias


def _with_via(user: EffectiveUser, via: str | None) -> EffectiveUser:
    return EffectiveUser(user.who, user.line, user.spelled, user.value, via)


def runs_as_nonroot(image: str) -> bool:
    """Base images whose default user is not root: distroless ``*nonroot*`` tags and
    Chainguard images (``cgr.dev/chainguard/...``) other than their root ones."""
    ref = image.lower().split("@", 1)[0]
    name, _, tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "")
    if "distroless/" in name:
        return bool(_DISTROLESS_NONROOT.search(tag))
    if name.startswith("cgr.dev/chainguard/"):
        return name.rsplit("/", 1)[-1] not in _CHAINGUARD_ROOT_IMAGES and "dev" not in tag
    return False


def _judge(value: str | None) -> Who:
    if value is None:
        return "unresolved"
    user = value.split(":", 1)[0].strip()
    if not user:
        return "unresolved"
    if user == "root" or (_NUMERIC.fullmatch(user) and int(user) == 0):
        return "root"
    return "non-root"


def _pairs(value: str, *, allow_bare: bool) -> list[tuple[str, str | None]]:
    """``ARG``/``ENV`` operands: ``k=v k2="v 2"``, legacy ``ENV k v``, bare ``ARG k``."""
    try:
        words = shlex.split(value, posix=True)
    except ValueError:
        words = value.split()
    if not words:
        return []
    if "=" not in words[0]:
        if allow_bare:
            return [(w, None) for w in words if "=" not in w]
        return [(words[0], value.split(None, 1)[1] if len(words) > 1 else "")]
    return [(w.split("=", 1)[0], w.split("=", 1)[1]) if "=" in w else (w, None) for w in words]


def _expand(text: str | None, known: dict[str, str | None]) -> str | None:
    """BuildKit's variable substitution; ``None`` when a variable has no value."""
    if text is None:
        return None
    failed = False

    def one(match: re.Match[str]) -> str:
        nonlocal failed
        name = match.group("braced") or match.group("bare")
        op, word = match.group("op"), match.group("word") or ""
        current = known.get(name)
        present = name in known and current is not None
        if op is None:
            if not present:
                failed = True
            return current or ""
        empty_counts = op.startswith(":")
        is_set = present and (bool(current) or not empty_counts)
        if op.endswith("-") and is_set:
            return current or ""
        if op.endswith("+") and not is_set:
            return ""
        sub = _expand(word, known)
        if sub is None:
            failed = True
        return sub or ""

    result = _VAR.sub(one, text)
    if failed or "$" in result:
        return None  # unset, or a form we do not evaluate: cannot tell who runs
    return result
