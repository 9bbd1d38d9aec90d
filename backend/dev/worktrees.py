"""A dev task's workspace: a real ``git worktree`` on ``feature/task-<id>`` and the file
tools of its ``dev-<module>`` agent, confined to the module's path.

The worktree lives under the data dir (``worktrees/<project>/<task>``), never where a
model could choose; every path a tool receives must stay in the module's path, checked
before anything is read or written (:class:`TaskWorkspace` lists the checks). The agent has
no shell: these tools and ``propose_task_pr`` are all it can do.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from backend.exceptions import NotFoundError, PathError, ValidationError
from backend.prs.git import DEFAULT_BRANCH, GitProvider, validate_path

MAX_FILE_BYTES = 256 * 1024
"""Largest file a dev agent may read or write through its tools."""
MAX_LISTED = 500
"""Most paths one ``list_files`` answers (the rest is counted, not listed)."""


class Worktrees(GitProvider):
    """``git worktree`` on a project's repository (this provider's ``repo_path``)."""

    def open(self, path: Path, branch: str, base: str = DEFAULT_BRANCH) -> Path:
        """The worktree at ``path`` on ``branch``: reused when it is intact (a crashed run's
        files stay for the next one), else (re)created from ``branch`` or, when the branch
        does not exist yet, a new branch from ``base``.

        Raises:
            PathError: an invalid branch name.
            StorageError: git failed.
        """
        self._check_branch_name(branch)
        path = path.resolve()
        if self._intact(path, branch):
            self._follow_head(path)
            return path
        if path.exists():
            shutil.rmtree(path)
        self._git("worktree", "prune")
        path.parent.mkdir(parents=True, exist_ok=True)
        if self.branch_exists(branch):
            self._git("worktree", "add", "-q", "--", str(path), branch)
        else:
            self._git("worktree", "add", "-q", "-b", branch, "--", str(path), base)
        return path

    def remove(self, path: Path) -> None:
        """Drop a worktree (its branch stays)."""
        self._git("worktree", "remove", "--force", "--", str(path), check=False)
        self._git("worktree", "prune", check=False)

    def _intact(self, path: Path, branch: str) -> bool:
        if not (path / ".git").is_file():
            return False
        at = self._git("-C", str(path), "symbolic-ref", "-q", "HEAD", check=False)
        alive = self._git("-C", str(path), "rev-parse", "--verify", "-q", "HEAD", check=False)
        return at.stdout.strip() == f"refs/heads/{branch}" and alive.returncode == 0

    def _follow_head(self, path: Path) -> None:
        # The branch may have moved without the worktree (a correction committed by the
        # pipeline): a two-way read-tree from the index's tree to HEAD brings the files
        # along and refuses to overwrite the agent's own uncommitted edits of those files.
        index = self._git("-C", str(path), "write-tree").stdout.strip()
        head = self._git("-C", str(path), "rev-parse", "HEAD^{tree}").stdout.strip()
        if index != head:
            self._git("-C", str(path), "read-tree", "-m", "-u", index, "HEAD", check=False)

    def changes(self, path: Path) -> list[str]:
        """Paths added or modified in the worktree since its head, sorted."""
        self._git("-C", str(path), "add", "-A")
        try:
            out = self._git(
                "-C", str(path), "diff", "--cached", "--name-only", "-z", "--no-renames",
                "--diff-filter=AMT", "HEAD",
            ).stdout  # fmt: skip
        finally:
            # Staged only to be listed: the index keeps naming the head, so a proposal that
            # is refused leaves the agent's files as they are (see _follow_head).
            self._git("-C", str(path), "reset", "-q")
        return sorted(p for p in out.split("\0") if p)

    def synced(self, path: Path) -> None:
        """Point the worktree's index at its (moved) head; the files stay as they are."""
        self._git("-C", str(path), "reset", "-q")


@dataclass(frozen=True)
class TaskWorkspace:
    """One task's worktree and the module path its agent may touch.

    Every path a tool receives is repository-relative and must stay in the module's path:
    empty, absolute (``/``, ``~``, a drive letter), backslash, NUL or another control
    character, a component starting with ``-``, ``.``/``..`` components, anything in
    ``.git``, and any symlink on the way (the file itself or one of its parents, in the module
    path too) are refused with a :class:`PathError` the model sees, before anything is read or
    written.

    ``propose_task_pr`` hands :meth:`changes` (what the agent wrote, read back from git) to the
    one PR pipeline, which commits them on the task branch with plumbing; :meth:`synced` then
    points the worktree's index at the new head, so the worktree is clean again. A correction
    the pipeline commits on its own (the rule-based fixer) reaches the worktree the next time
    it is opened (:meth:`Worktrees.open`).

    Attributes:
        root: the worktree's top directory.
        module_path: the module's repository-relative path (``.``: the whole repository).
        git: the project's repository (for :meth:`changes` and :meth:`synced`).
    """

    root: Path
    module_path: str
    git: Worktrees

    def resolve(self, path: str) -> Path:
        """The file ``path`` names, after every check on :class:`TaskWorkspace`.

        Raises:
            PathError: the path is refused (the message says why).
        """
        if not isinstance(path, str):
            raise PathError("a path must be a string", path=path)
        path = path.strip() or self.module_path
        if path != ".":
            validate_path(path)
        if not self.inside_module(path):
            raise PathError(
                f"file path {path!r} is outside module path {self.module_path!r}; this agent "
                "may only touch its own module",
                path=path,
            )
        target = self.root
        for part in PurePosixPath(path).parts:
            if part == ".":
                continue
            target = target / part
            if target.is_symlink():
                raise PathError(
                    f"file path {path!r} goes through a symlink ({target.relative_to(self.root)})"
                    "; symlinks are refused",
                    path=path,
                )
        return target

    def inside_module(self, path: str) -> bool:
        """Whether a repository-relative ``path`` is in the module's path."""
        if self.module_path == ".":
            return True
        return path == self.module_path or path.startswith(self.module_path.rstrip("/") + "/")

    def list_files(self, path: str = "") -> dict[str, object]:
        """Regular files under ``path`` (default: the module), repository-relative, sorted;
        symlinks and ``.git`` are left out."""
        top = self.resolve(path)
        if not top.exists():
            raise NotFoundError(f"{path or self.module_path!r} does not exist", path=path)
        if top.is_file():
            return {"files": [self._rel(top)], "truncated": 0}
        found: list[str] = []
        for current, dirs, names in os.walk(top, followlinks=False):
            dirs[:] = sorted(d for d in dirs if d != ".git" and not Path(current, d).is_symlink())
            for name in sorted(names):
                full = Path(current, name)
                if name != ".git" and full.is_file() and not full.is_symlink():
                    found.append(self._rel(full))
        found.sort()
        return {"files": found[:MAX_LISTED], "truncated": max(0, len(found) - MAX_LISTED)}

    def read_file(self, path: str) -> dict[str, object]:
        """The text of one file of the module."""
        target = self.resolve(path)
        if not target.is_file():
            raise NotFoundError(f"{path!r} is not a file in the worktree", path=path)
        data = target.read_bytes()
        if len(data) > MAX_FILE_BYTES:
            raise ValidationError(f"{path!r} is over {MAX_FILE_BYTES} bytes", path=path)
        return {"path": self._rel(target), "content": data.decode("utf-8", "replace")}

    def write_file(self, path: str, content: str) -> dict[str, object]:
        """Create or replace one file of the module (parents are created)."""
        if not isinstance(content, str):
            raise ValidationError("content must be a string")
        data = content.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise ValidationError(f"content is over {MAX_FILE_BYTES} bytes", path=path)
        target = self.resolve(path)
        if target == self.root or target.is_dir():
            raise PathError(f"{path!r} is a directory", path=path)
        target.parent.mkdir(parents=True, exist_ok=True)
        # O_NOFOLLOW: a symlink planted between the check and the write is still refused.
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        return {"path": self._rel(target), "bytes": len(data)}

    def changes(self) -> dict[str, str]:
        """What the agent changed (path → content), every path checked again.

        Raises:
            ValidationError: nothing changed.
            PathError: a changed path is outside the module (refused, nothing proposed).
        """
        paths = self.git.changes(self.root)
        if not paths:
            raise ValidationError(
                "nothing to propose: no file in the worktree differs from the task branch; "
                "write the change with write_file first"
            )
        return {p: str(self.read_file(p)["content"]) for p in paths}

    def synced(self) -> None:
        """After the pipeline committed :meth:`changes`: the worktree is clean again."""
        self.git.synced(self.root)

    def _rel(self, full: Path) -> str:
        return full.relative_to(self.root).as_posix()
