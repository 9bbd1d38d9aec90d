"""The temporary copy the scanners run on.

A PR must not be able to silence its own gate, so the copy loses every suppression
file the PR brings and every inline suppression comment, and nothing outside the
copy is reachable from it (paths are validated, symlinks are not copied).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from backend.exceptions import PathError

SUPPRESSION_FILES: frozenset[str] = frozenset(
    {
        ".hadolint.yaml",
        ".hadolint.yml",
        ".semgrepignore",
        ".semgrep.yml",
        ".semgrep.yaml",
        ".checkov.yaml",
        ".checkov.yml",
        ".secrets.baseline",
        ".gitleaksignore",
        ".gitleaks.toml",
        ".trivyignore",
        ".trivyignore.yaml",
        ".tflint.hcl",
    }
)
"""Basenames deleted from the copy wherever they appear."""

_INLINE_SUPPRESSION = re.compile(
    r"""
    (?:\#|//|/\*|--|;)?[ \t]*
    (?:
        hadolint[ \t]+(?:ignore|global[ \t]+ignore)[ \t]*=[^\r\n]*   # hadolint ignore=DL3007
      | nosem(?:grep)?\b[^\r\n]*                                    # nosemgrep / nosem: rule
      | pragma:[ \t]*allowlist[^\r\n]*                              # detect-secrets
      | gitleaks:allow\b[^\r\n]*
      | checkov:skip=[^\r\n]*
      | tfsec:ignore:[^\r\n]*
      | trivy:ignore:[^\r\n]*
    )
    """,
    re.IGNORECASE | re.VERBOSE,
)
_SKIPPED_DIRS = frozenset({".git"})


def validate_relative_path(raw: str) -> PurePosixPath:
    """Check one PR file path and return it normalised.

    Raises:
        PathError: empty, absolute, drive-letter or backslash paths, ``..`` segments,
            NUL bytes, or anything inside ``.git/``.
    """
    if not raw or "\x00" in raw:
        raise PathError(f"invalid file path {raw!r}", path=raw)
    if "\\" in raw or re.match(r"^[A-Za-z]:", raw):
        raise PathError(f"file path must be a relative POSIX path: {raw!r}", path=raw)
    path = PurePosixPath(raw)
    if path.is_absolute():
        raise PathError(f"absolute file path not allowed: {raw!r}", path=raw)
    parts = [p for p in path.parts if p != "."]
    if not parts:
        raise PathError(f"invalid file path {raw!r}", path=raw)
    if ".." in parts:
        raise PathError(f"'..' not allowed in file path: {raw!r}", path=raw)
    if ".git" in parts:
        raise PathError(f"files inside .git/ not allowed: {raw!r}", path=raw)
    return PurePosixPath(*parts)


def validate_files(files: Mapping[str, str]) -> dict[PurePosixPath, str]:
    """Validate every path of a PR payload before anything is written.

    Raises:
        PathError: a bad path, or two paths that normalise to the same file or where
            one is a directory of the other.
    """
    clean: dict[PurePosixPath, str] = {}
    for raw, content in files.items():
        path = validate_relative_path(raw)
        if path in clean:
            raise PathError(f"duplicate file path: {raw!r}", path=raw)
        if not isinstance(content, str):
            raise PathError(f"content of {raw!r} must be text", path=raw)
        clean[path] = content
    for path in clean:
        for parent in path.parents:
            if parent in clean:
                raise PathError(f"{parent} is both a file and a directory", path=str(path))
    return clean


@dataclass(frozen=True)
class Workspace:
    """A prepared temporary copy.

    Attributes:
        root: the temporary directory (removed when the context manager exits).
        files: every regular file in it, relative, ``/``-separated, sorted.
        removed: suppression files that were deleted from the copy.
        ignored: symlinks or special files of a scanned directory that were not copied.
    """

    root: Path
    files: tuple[str, ...]
    removed: tuple[str, ...]
    ignored: tuple[str, ...]


@contextmanager
def prepared_copy(source: Mapping[str, str] | Path) -> Iterator[Workspace]:
    """Copy a PR payload or a directory to a temp dir stripped of suppressions.

    Args:
        source: ``{relative path: content}`` of a PR, or a directory to scan.

    Yields:
        The workspace; its directory is removed afterwards, even on error.

    Raises:
        PathError: a bad path in the payload (nothing is written), or a directory
            that does not exist.
    """
    payload: dict[PurePosixPath, str] | None = None
    src: Path | None = None
    if isinstance(source, Mapping):
        payload = validate_files(source)
    else:
        src = Path(source)
        if not src.is_dir():
            raise PathError(f"not a directory: {src}", path=str(src))
    root = Path(tempfile.mkdtemp(prefix="cadencia-gate-"))
    try:
        ignored: list[str] = []
        if payload is not None:
            for rel, content in payload.items():
                target = root.joinpath(*rel.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(content, encoding="utf-8")
        elif src is not None:
            ignored = _copy_tree(src, root)
        removed = _remove_suppression_files(root)
        files = _list_files(root)
        for name in files:
            _strip_inline_suppressions(root / name)
        yield Workspace(root=root, files=files, removed=removed, ignored=tuple(ignored))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _copy_tree(src: Path, dst: Path) -> list[str]:
    """Copy regular files only; symlinks could point anywhere on this machine."""
    ignored: list[str] = []
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        here = Path(dirpath)
        rel_dir = here.relative_to(src)
        for name in list(dirnames):
            if name in _SKIPPED_DIRS or (here / name).is_symlink():
                dirnames.remove(name)
                if name not in _SKIPPED_DIRS:
                    ignored.append((rel_dir / name).as_posix())
        for name in filenames:
            path = here / name
            rel = rel_dir / name
            if path.is_symlink() or not path.is_file():
                ignored.append(rel.as_posix())
                continue
            target = dst / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    return sorted(ignored)


def _remove_suppression_files(root: Path) -> tuple[str, ...]:
    removed = []
    for path in sorted(root.rglob("*")):
        if path.name in SUPPRESSION_FILES and path.is_file():
            path.unlink()
            removed.append(path.relative_to(root).as_posix())
    return tuple(removed)


def _list_files(root: Path) -> tuple[str, ...]:
    return tuple(sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()))


def strip_inline_suppressions(text: str) -> str:
    """Remove suppression comments, keeping every line (so line numbers still match)."""
    return _INLINE_SUPPRESSION.sub("", text)


def _strip_inline_suppressions(path: Path) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return  # binary files carry no comment a scanner would honour
    stripped = strip_inline_suppressions(text)
    if stripped != text:
        path.write_text(stripped, encoding="utf-8")
