"""What a repository-relative file path may be, checked before anything is written.

One rule for every road a path takes into a repository or a tool: the git provider's
commits, a gate job's payload, a dev task's worktree, ``cadencia infra plan`` and the Infra
agent's ``validate_infra_file``. It lives below all of them so none imports another for it.
"""

from __future__ import annotations

import re
import unicodedata

from backend.exceptions import PathError


def validate_path(path: str) -> str:
    """Check a repository-relative path before anything is written.

    A path is data wherever it goes: a control character (a newline ends a record of
    ``update-index --index-info``, an escape sequence rewrites an operator's terminal) or a
    component starting with ``-`` (an option to whichever tool is handed it) is refused.

    Returns:
        The path unchanged (it must already be canonical POSIX).

    Raises:
        PathError: empty, absolute, backslash, NUL or another control character, a
            component starting with ``-``, ``.``/``..``/empty components, or anything
            inside ``.git``.
    """
    if not isinstance(path, str) or not path:
        raise PathError("empty file path", path=path)
    if "\x00" in path:
        raise PathError(f"file path {path!r} contains a NUL byte", path=path)
    control = next((c for c in path if unicodedata.category(c) == "Cc"), None)
    if control is not None:
        raise PathError(
            f"file path {path!r} contains the control character {control!r}; "
            "file names are printable text",
            path=path,
        )
    if "\\" in path:
        raise PathError(f"file path {path!r} contains a backslash; use '/'", path=path)
    if path.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", path):
        raise PathError(
            f"file path {path!r} is absolute; paths are relative to the repo", path=path
        )
    parts = path.split("/")
    if ".." in parts:
        raise PathError(
            f"file path {path!r} contains '..' and could escape the repository", path=path
        )
    if any(part in {"", "."} for part in parts):
        raise PathError(f"file path {path!r} has empty or '.' components", path=path)
    if any(part.startswith("-") for part in parts):
        raise PathError(
            f"file path {path!r} has a component starting with '-', which a command would "
            "read as an option; rename it",
            path=path,
        )
    if any(part.lower().rstrip(". ") == ".git" for part in parts):
        raise PathError(f"file path {path!r} points into .git", path=path)
    return path
