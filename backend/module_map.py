"""The module map: which deployable modules a repository holds.

The module map's shape is ``{"modules": [{"name", "path", "language", "kind", "port"}]}``. The
Arquiteto writes it (``backend.agents``), the planner plans from it (``backend.planner``),
and ``cadencia infra plan`` reads it from a file; when there is none, the planner detects
one from manifests (:func:`backend.planner.detect_modules`). It lives below both
packages so neither imports the other for it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError

from backend.exceptions import ValidationError

Language = Literal["python", "node", "go", "java", "rust"]
Kind = Literal["service", "job", "library"]

_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


class Module(BaseModel):
    """One deployable unit of the repository."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(max_length=63)
    path: str = "."
    """Relative POSIX path from the repository root; ``.`` for the root itself."""
    language: Language
    kind: Kind = "service"
    port: int | None = Field(default=None, ge=1, le=65535)
    entry: str | None = None
    """Detected entry point (e.g. ``app.main:app``, ``server.js``); informative, optional."""

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(
                "name must be lowercase letters, digits and '-', starting with a letter or digit"
            )
        return value

    @field_validator("path")
    @classmethod
    def _check_path(cls, value: str) -> str:
        if not value or "\\" in value or "\x00" in value:
            raise ValueError("path must be a non-empty POSIX path without backslashes or NUL")
        pure = PurePosixPath(value)
        if pure.is_absolute() or re.match(r"^[A-Za-z]:", value):
            raise ValueError("path must be relative to the repository root")
        if any(part == ".." for part in pure.parts):
            raise ValueError("path must not contain '..'")
        if any(part.lower() == ".git" for part in pure.parts):
            raise ValueError("path must not point into .git")
        return pure.as_posix() or "."

    @model_validator(mode="after")
    def _service_has_port(self) -> Module:
        if self.kind == "service" and self.port is None:
            raise ValueError(f"module {self.name!r} is a service but has no port")
        return self


class ModuleMap(BaseModel):
    """The whole map; module names and paths are unique."""

    model_config = ConfigDict(extra="forbid")

    modules: list[Module]

    @model_validator(mode="after")
    def _unique(self) -> ModuleMap:
        names = [m.name for m in self.modules]
        if len(set(names)) != len(names):
            raise ValueError("module names must be unique")
        paths = [m.path for m in self.modules]
        if len(set(paths)) != len(paths):
            raise ValueError("module paths must be unique")
        return self


def parse_module_map(text: str, *, source: str = "module map") -> ModuleMap:
    """Parse and validate module map JSON.

    Raises:
        ValidationError: the text is not JSON or does not fit the schema; the message
            names the source and the offending field.
    """
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationError(
            f"{source}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
            source=source,
        ) from exc
    try:
        return ModuleMap.model_validate(raw)
    except PydanticValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ValidationError(f"{source}: invalid module map: {problems}", source=source) from exc


def load_module_map(path: Path) -> ModuleMap:
    """Read a module map file.

    Raises:
        ValidationError: the file is missing, unreadable or invalid.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValidationError(
            f"cannot read module map {path}: {exc.strerror}", path=str(path)
        ) from exc
    return parse_module_map(text, source=str(path))
