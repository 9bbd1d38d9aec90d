"""A git provider over the real ``git`` CLI on a local repository.

Commits are built with plumbing (``hash-object``, a temporary index via
``GIT_INDEX_FILE``, ``write-tree``, ``commit-tree``, ``update-ref`` with the expected old
value), so committing to a branch never checks anything out, never touches the user's
index or work tree, and two writers racing on one branch fail loudly instead of losing a
commit. Merges use ``merge-tree --write-tree`` the same way: a conflict leaves nothing
half-done.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from backend.exceptions import ConflictError, NotFoundError, PathError, StorageError
from backend.repo_paths import validate_path

DEFAULT_BRANCH = "main"
_AUTHOR = ("Cadência Infra Agent", "infra-agent@cadencia.local")
_TIMEOUT_S = 60.0
_ZERO = "0" * 40


@dataclass(frozen=True)
class GitPullRequest:
    """A local pull request: a pure value; persisting it is the store's job."""

    id: str
    url: str
    branch: str
    head: str
    base: str
    title: str = ""


class GitProvider:
    """Branches, commits, diffs and merges on one local repository."""

    def __init__(self, repo_path: Path | str, *, timeout_s: float = _TIMEOUT_S) -> None:
        self.repo_path = Path(repo_path).resolve()
        self.timeout_s = timeout_s

    # --- repository -----------------------------------------------------------------------

    def ensure_repo(self, default_branch: str = DEFAULT_BRANCH) -> None:
        """Make ``repo_path`` a repository whose ``main`` has at least one commit.

        A fresh repository gets an initial commit holding the files already present, so
        later PR diffs show only what the agent proposes. An identity for commits is set
        locally when the repository has none.
        """
        self.repo_path.mkdir(parents=True, exist_ok=True)
        top = self._git("rev-parse", "--show-toplevel", check=False)
        if top.returncode != 0 or Path(top.stdout.strip()).resolve() != self.repo_path:
            self._git("init", "-q", "-b", default_branch)
        for key, value in (("user.name", _AUTHOR[0]), ("user.email", _AUTHOR[1])):
            if self._git("config", "--get", key, check=False).returncode != 0:
                self._git("config", "--local", key, value)
        if self._rev(f"refs/heads/{default_branch}") is not None:
            return
        head_unborn = self._rev("HEAD") is None
        with self._temp_index() as env:
            self._git("add", "-A", env=env)
            tree = self._git("write-tree", env=env).stdout.strip()
        commit = self._git("commit-tree", tree, "-m", "Initial commit").stdout.strip()
        self._git("update-ref", f"refs/heads/{default_branch}", commit, _ZERO)
        if head_unborn:
            # The work tree already holds these files: point HEAD at main and load the
            # index from it, so `git status` is clean.
            self._git("symbolic-ref", "HEAD", f"refs/heads/{default_branch}")
            self._git("read-tree", "HEAD")

    def branch_exists(self, name: str) -> bool:
        """Whether ``refs/heads/<name>`` exists."""
        return self._rev(f"refs/heads/{name}") is not None

    def head(self, ref: str) -> str:
        """The commit sha ``ref`` points to.

        Raises:
            NotFoundError: no such ref.
        """
        sha = self._rev(ref)
        if sha is None:
            raise NotFoundError(f"git ref {ref!r} not found in {self.repo_path}", ref=ref)
        return sha

    def create_branch(self, name: str, from_ref: str = DEFAULT_BRANCH) -> str:
        """Create ``name`` at ``from_ref``; returns its sha.

        Raises:
            PathError: an invalid branch name.
            ConflictError: the branch already exists.
        """
        self._check_branch_name(name)
        base = self.head(from_ref)
        result = self._git("update-ref", f"refs/heads/{name}", base, _ZERO, check=False)
        if result.returncode != 0:
            if self.branch_exists(name):
                raise ConflictError(f"branch {name!r} already exists", branch=name)
            self._raise("update-ref", result)
        return base

    # --- commits --------------------------------------------------------------------------

    def commit_files(self, branch: str, files: dict[str, str], message: str) -> str:
        """Commit ``files`` (path → content) to ``branch`` in ONE commit; returns its sha.

        Every path is validated first (see :func:`validate_path`, plus symlinks in the
        branch's tree or in the work tree that would lead outside the repository); on any
        rejection nothing is written, not even a blob.

        Raises:
            PathError: a rejected path.
            NotFoundError: the branch does not exist.
            ConflictError: the branch moved while committing (a concurrent writer).
        """
        if not files:
            raise PathError("nothing to commit: no files given")
        parent = self.head(f"refs/heads/{branch}")
        for path in files:
            validate_path(path)
            self._check_symlinks(parent, path)
        with self._temp_index() as env:
            self._git("read-tree", parent, env=env)
            entries = []
            for path, content in files.items():
                blob = self._git("hash-object", "-w", "--stdin", input=content.encode()).stdout
                entries.append(f"100644 {blob.strip()}\t{path}\0")
            # NUL-terminated records: a path is one record whatever it holds
            self._git(
                "update-index", "-z", "--index-info", env=env, input="".join(entries).encode()
            )
            tree = self._git("write-tree", env=env).stdout.strip()
        commit = self._git("commit-tree", tree, "-p", parent, "-m", message).stdout.strip()
        self._move_ref(branch, commit, parent)
        return commit

    def read_files(self, ref: str, paths: list[str]) -> dict[str, str]:
        """Contents of ``paths`` at ``ref``.

        Raises:
            NotFoundError: the ref or one of the paths does not exist.
        """
        sha = self.head(ref)
        out: dict[str, str] = {}
        for path in paths:
            validate_path(path)
            result = self._git("cat-file", "blob", f"{sha}:{path}", check=False)
            if result.returncode != 0:
                raise NotFoundError(f"{path!r} not found at {ref!r}", ref=ref, path=path)
            out[path] = result.stdout
        return out

    def list_files(self, ref: str) -> list[str]:
        """Every file path in ``ref``'s tree."""
        return self._git("ls-tree", "-r", "--name-only", self.head(ref)).stdout.splitlines()

    def diff(self, base: str, head: str) -> str:
        """The unified diff a pull request shows: ``head`` against its merge base with ``base``."""
        return self._git(
            "diff", "--no-color", "--no-ext-diff", f"{self.head(base)}...{self.head(head)}"
        ).stdout

    def merged_diff(self, base: str, head: str) -> str:
        """The diff a merged pull request showed: ``head`` against where ``base`` stood when
        the merge commit that brought ``head`` in was made (``head`` is in ``base`` now, so
        the plain three-dot diff is empty). Not merged: the plain diff."""
        merges = self._git(
            "rev-list",
            "--ancestry-path",
            "--merges",
            "--reverse",
            f"{self.head(head)}..{self.head(base)}",
        ).stdout.split()
        if not merges:
            return self.diff(base, head)
        before = f"{merges[0]}^1"
        return self._git(
            "diff", "--no-color", "--no-ext-diff", f"{before}...{self.head(head)}"
        ).stdout

    def merge(self, branch: str, into: str = DEFAULT_BRANCH, message: str | None = None) -> str:
        """Merge ``branch`` into ``into`` with a real merge commit; returns ``into``'s sha.

        If ``into`` is checked out, its index and work tree follow (see ``_move_ref``).

        Raises:
            ConflictError: the merge conflicts or local changes would be overwritten; no ref,
                index or file has changed.
        """
        ours, theirs = self.head(f"refs/heads/{into}"), self.head(f"refs/heads/{branch}")
        if self._git("merge-base", "--is-ancestor", theirs, ours, check=False).returncode == 0:
            return ours  # already merged
        result = self._git(
            "merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs, check=False
        )
        if result.returncode == 1:
            conflicted = [line for line in result.stdout.splitlines()[1:] if line]
            raise ConflictError(
                f"merging {branch!r} into {into!r} conflicts in: {', '.join(conflicted)}",
                branch=branch,
                into=into,
                files=conflicted,
            )
        if result.returncode != 0:
            self._raise("merge-tree", result)
        tree = result.stdout.splitlines()[0].strip()
        text = message or f"Merge branch '{branch}' into {into}"
        commit = self._git("commit-tree", tree, "-p", ours, "-p", theirs, "-m", text).stdout.strip()
        self._move_ref(into, commit, ours)
        return commit

    def open_pull_request(
        self, branch: str, title: str, base: str = DEFAULT_BRANCH
    ) -> GitPullRequest:
        """A PR record for ``branch``; the id is stable per (repository, base, branch)."""
        head = self.head(f"refs/heads/{branch}")
        self.head(f"refs/heads/{base}")
        digest = hashlib.sha256(f"{self.repo_path}\0{base}\0{branch}".encode()).hexdigest()
        pr_id = digest[:12]
        return GitPullRequest(
            id=pr_id,
            url=f"{self.repo_path.as_uri()}#pr/{pr_id}",
            branch=branch,
            head=head,
            base=base,
            title=title,
        )

    # --- internals ------------------------------------------------------------------------

    def _check_branch_name(self, name: str) -> None:
        result = self._git("check-ref-format", "--branch", name, check=False)
        if result.returncode != 0 or name.startswith("-"):
            raise PathError(f"invalid branch name {name!r}", branch=name)

    def _check_symlinks(self, commit: str, path: str) -> None:
        parts = PurePosixPath(path).parts
        for depth in range(1, len(parts)):
            prefix = "/".join(parts[:depth])
            entry = self._git("ls-tree", commit, "--", prefix).stdout.strip()
            if entry.startswith("120000 "):
                target = self._git("cat-file", "blob", entry.split()[2]).stdout.strip()
                where = "outside the repository" if _escapes(prefix, target) else "elsewhere"
                raise PathError(
                    f"file path {path!r} goes through symlink {prefix!r} -> {target!r} "
                    f"({where}) in the branch",
                    path=path,
                    symlink=prefix,
                )
            if entry and not entry.startswith("040000 "):
                raise PathError(
                    f"file path {path!r} needs {prefix!r} to be a directory, "
                    "but it is a file in the branch",
                    path=path,
                )
            local = self.repo_path.joinpath(*parts[:depth])
            if local.is_symlink():
                resolved = local.resolve()
                if not resolved.is_relative_to(self.repo_path):
                    raise PathError(
                        f"file path {path!r} goes through symlink {prefix!r} -> {resolved} "
                        "outside the repository",
                        path=path,
                        symlink=prefix,
                    )

    def _move_ref(self, branch: str, new: str, old: str) -> None:
        """Compare-and-swap ``branch`` from ``old`` to ``new``.

        When the branch is checked out, its index and work tree follow first (a two-way
        ``read-tree -m -u`` that refuses to overwrite local changes), so ``git status``
        stays clean and nothing the user edited is lost.
        """
        if self._checked_out() == f"refs/heads/{branch}":
            self._git("update-index", "-q", "--refresh", check=False)  # stale stat info
            sync = self._git("read-tree", "-m", "-u", old, new, check=False)
            if sync.returncode != 0:
                raise ConflictError(
                    f"updating checked-out branch {branch!r} would overwrite local changes in "
                    f"{self.repo_path}: {sync.stderr.strip()}",
                    branch=branch,
                )
        result = self._git("update-ref", f"refs/heads/{branch}", new, old, check=False)
        if result.returncode != 0:
            raise ConflictError(
                f"branch {branch!r} moved while committing; retry: {result.stderr.strip()}",
                branch=branch,
            )

    def _checked_out(self) -> str | None:
        if self._git("rev-parse", "--is-bare-repository").stdout.strip() == "true":
            return None
        result = self._git("symbolic-ref", "-q", "HEAD", check=False)
        return result.stdout.strip() if result.returncode == 0 else None

    def _rev(self, ref: str) -> str | None:
        result = self._git("rev-parse", "--verify", "-q", f"{ref}^{{commit}}", check=False)
        return result.stdout.strip() if result.returncode == 0 else None

    def _temp_index(self) -> _TempIndex:
        return _TempIndex(self)

    def _git(
        self,
        *args: str,
        check: bool = True,
        env: dict[str, str] | None = None,
        input: bytes | None = None,
    ) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", **(env or {})}
        try:
            raw = subprocess.run(
                ["git", "-C", str(self.repo_path), *args],
                input=input,
                capture_output=True,
                env=full_env,
                timeout=self.timeout_s,
                check=False,
            )
        except FileNotFoundError as exc:
            raise StorageError("git is not installed (not on PATH)") from exc
        except subprocess.TimeoutExpired as exc:
            raise StorageError(
                f"git {args[0]} timed out after {self.timeout_s}s", args=list(args)
            ) from exc
        result = subprocess.CompletedProcess(
            raw.args,
            raw.returncode,
            raw.stdout.decode("utf-8", "replace"),
            raw.stderr.decode("utf-8", "replace"),
        )
        if check and result.returncode != 0:
            self._raise(args[0], result)
        return result

    def _raise(self, command: str, result: subprocess.CompletedProcess[str]) -> None:
        raise StorageError(
            f"git {command} failed in {self.repo_path} (exit {result.returncode}): "
            f"{result.stderr.strip()}",
            command=command,
            returncode=result.returncode,
            stderr=result.stderr,
        )


class _TempIndex:
    """A throwaway index file so plumbing never touches the user's ``.git/index``."""

    def __init__(self, provider: GitProvider) -> None:
        self._provider = provider
        self._dir: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> dict[str, str]:
        self._dir = tempfile.TemporaryDirectory(prefix="cadencia-index-")
        return {"GIT_INDEX_FILE": str(Path(self._dir.name) / "index")}

    def __exit__(self, *exc: object) -> None:
        assert self._dir is not None
        self._dir.cleanup()


def _escapes(link_dir: str, target: str) -> bool:
    if target.startswith("/"):
        return True
    depth = len(PurePosixPath(link_dir).parts) - 1
    for part in PurePosixPath(target).parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 0:
            return True
    return False
