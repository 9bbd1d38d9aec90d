"""The temporary copy the scanners run on.

A PR must not be able to silence its own gate, so the copy loses every suppression
file the PR brings and every inline suppression comment, and nothing outside the
copy is reachable from it (paths are validated; a symlink is replaced by its target
when that stays inside the tree, and is a finding when it leaves it). Every file is
UTF-8 text in the copy, so no scanner skips one for its encoding.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from backend.exceptions import PathError
from backend.gates.encodings import decode
from backend.gates.findings import Finding, Severity

TOOL = "workspace"
"""The tool name of the copy's own findings (symlinks, encodings)."""

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
        findings: what the copy itself found: a symlink leaving the PR (blocking), and
            as ``info`` every symlink followed, file transcoded to UTF-8 or binary file
            reduced to its strings, so the report says what was scanned and how.
    """

    root: Path
    files: tuple[str, ...]
    removed: tuple[str, ...]
    ignored: tuple[str, ...]
    findings: tuple[Finding, ...] = ()


@contextmanager
def prepared_copy(source: Mapping[str, str] | Path) -> Iterator[Workspace]:
    """Copy a PR payload or a directory to a temp dir stripped of suppressions.

    Every file of the copy is UTF-8 text afterwards (:mod:`backend.gates.encodings`),
    so no scanner skips a file for its encoding.

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
        copied = _Copied()
        if payload is not None:
            for rel, content in payload.items():
                target = root.joinpath(*rel.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                # surrogatepass: a str that is not valid Unicode is still written, and read
                # back below byte by byte instead of crashing the gate
                target.write_text(content, encoding="utf-8", errors="surrogatepass")
        elif src is not None:
            real = src.resolve()
            _copy_tree(src, root, PurePosixPath(), real, (real,), copied)
        removed = _remove_suppression_files(root)
        files = _list_files(root)
        for name in files:
            _normalise(root, name, copied.findings)
        yield Workspace(
            root=root,
            files=files,
            removed=removed,
            ignored=tuple(sorted(copied.ignored)),
            findings=tuple(sorted(copied.findings, key=Finding.sort_key)),
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class _Copied:
    ignored: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def note(self, rel: PurePosixPath, rule: str, severity: Severity, message: str) -> None:
        self.findings.append(
            Finding(
                file=rel.as_posix(),
                line=None,
                tool=TOOL,
                rule=rule,
                severity=severity,
                message=message,
            )
        )


def _copy_tree(
    src: Path,
    dst: Path,
    prefix: PurePosixPath,
    real_root: Path,
    chain: tuple[Path, ...],
    copied: _Copied,
) -> None:
    """Copy ``src`` to ``dst/prefix``: regular files, and symlinks resolved inside the tree.

    A symlink whose target stays inside the scanned tree is copied as its target's
    content under the link's own name (a ``Dockerfile`` linked to ``notes.txt`` is
    linted as a Dockerfile; a linked ``.github/workflows`` is checked as workflows).
    One that leaves the tree is never read (it could be any file of this machine)
    and is a blocking finding. ``chain`` holds the real directories being walked,
    so a link back into one of them (a loop) is noted and not followed again.
    """
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        here = Path(dirpath)
        rel_dir = prefix / here.relative_to(src)
        for name in list(dirnames):
            if name in _SKIPPED_DIRS:
                dirnames.remove(name)
            elif (here / name).is_symlink():
                dirnames.remove(name)
                _copy_link(here / name, rel_dir / name, dst, real_root, chain, copied)
        for name in filenames:
            path = here / name
            rel = rel_dir / name
            if path.is_symlink():
                _copy_link(path, rel, dst, real_root, chain, copied)
            elif path.is_file():
                _copy_file(path, dst, rel)
            else:
                copied.ignored.append(rel.as_posix())
                copied.note(rel, "special-file", "info", "not a regular file: not scanned")


def _copy_link(
    link: Path,
    rel: PurePosixPath,
    dst: Path,
    real_root: Path,
    chain: tuple[Path, ...],
    copied: _Copied,
) -> None:
    raw = os.readlink(link)
    target = Path(os.path.realpath(link))
    if target != real_root and real_root not in target.parents:
        copied.ignored.append(rel.as_posix())
        copied.note(
            rel,
            "symlink-outside-pr",
            "error",
            f"symlink {rel} -> {raw} points outside the PR: it was not scanned; "
            "commit the file itself instead of a link to it",
        )
    elif target.is_file():
        _copy_file(target, dst, rel)
        copied.note(
            rel,
            "symlink-followed",
            "info",
            f"symlink -> {raw}: its target is scanned under this name",
        )
    elif target.is_dir():
        here = Path(os.path.realpath(link.parent))
        if any(target == seen or target in seen.parents for seen in (*chain, here)):
            copied.ignored.append(rel.as_posix())
            copied.note(
                rel,
                "symlink-loop",
                "info",
                f"symlink -> {raw} loops back into the tree: not followed again",
            )
            return
        copied.note(
            rel,
            "symlink-followed",
            "info",
            f"symlink -> {raw}: its files are scanned under this directory",
        )
        _copy_tree(target, dst, rel, real_root, (*chain, target), copied)
    else:
        copied.ignored.append(rel.as_posix())
        copied.note(
            rel, "symlink-broken", "info", f"symlink -> {raw} has no target: nothing to scan"
        )


def _copy_file(path: Path, dst: Path, rel: PurePosixPath) -> None:
    target = dst.joinpath(*rel.parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, target)


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


def _normalise(root: Path, name: str, findings: list[Finding]) -> None:
    """Rewrite one file of the copy as UTF-8 without suppression comments."""
    path = root / name
    try:
        data = path.read_bytes()
    except OSError:
        return
    decoded = decode(data)
    if decoded.kind == "transcoded":
        findings.append(
            Finding(
                file=name,
                line=None,
                tool=TOOL,
                rule="encoding-transcoded",
                severity="info",
                message=f"read as {decoded.encoding}: scanned as its UTF-8 text",
            )
        )
    elif decoded.kind == "binary":
        findings.append(
            Finding(
                file=name,
                line=None,
                tool=TOOL,
                rule="binary-as-strings",
                severity="info",
                message="binary file: its printable strings are scanned (lines are string numbers)",
            )
        )
    text = strip_inline_suppressions(decoded.text)
    out = text.encode("utf-8", errors="surrogatepass")
    if out != data:
        path.write_bytes(out)
