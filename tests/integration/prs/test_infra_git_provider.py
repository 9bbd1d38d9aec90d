"""The git provider against the real ``git`` CLI in a temporary repository."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from backend.exceptions import ConflictError, NotFoundError, PathError
from backend.prs.git import GitProvider

BRANCH = "feature/infra-setup"
FILES = {
    "Dockerfile": "FROM python:3.11.9-slim-bookworm\nUSER 10001\n",
    "compose.yaml": "services: {}\n",
    ".github/workflows/ci.yml": "name: ci\n",
    "services/api/Dockerfile": "FROM node:20.18.0-bookworm-slim\nUSER 10001\n",
}

Git = Callable[..., str]


def _snapshot(provider: GitProvider, git: Git) -> tuple[str, str, str, list[str]]:
    """Refs, objects count, status and work tree listing: what must not change on rejection."""
    root = provider.repo_path
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if ".git" not in p.parts)
    return (
        git(root, "for-each-ref"),
        git(root, "count-objects", "-v"),
        git(root, "status", "--porcelain"),
        files,
    )


def test_ensure_repo_creates_main_with_initial_commit(tmp_path: Path, git: Git) -> None:
    (tmp_path / "app.py").write_text("print('hi')\n")
    provider = GitProvider(tmp_path)
    provider.ensure_repo()
    assert git(tmp_path, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert git(tmp_path, "ls-tree", "-r", "--name-only", "main").split() == ["app.py"]
    assert git(tmp_path, "status", "--porcelain") == ""
    provider.ensure_repo()  # idempotent
    assert git(tmp_path, "rev-list", "--count", "main").strip() == "1"


def test_commit_n_files_in_one_commit_on_feature_branch(repo: GitProvider, git: Git) -> None:
    main_before = repo.head("main")
    repo.create_branch(BRANCH)
    sha = repo.commit_files(BRANCH, FILES, "infra: initial proposal")

    root = repo.repo_path
    assert git(root, "rev-parse", BRANCH).strip() == sha
    assert git(root, "rev-list", "--count", f"main..{BRANCH}").strip() == "1"
    changed = git(root, "diff-tree", "--no-commit-id", "--name-only", "-r", sha).split()
    assert sorted(changed) == sorted(FILES)
    assert repo.read_files(BRANCH, list(FILES)) == FILES
    # main, the index and the work tree are untouched.
    assert repo.head("main") == main_before
    assert git(root, "status", "--porcelain") == ""
    assert not (root / "Dockerfile").exists()
    assert "README.md" in repo.list_files(BRANCH)


def test_second_commit_on_same_branch_and_diff(repo: GitProvider, git: Git) -> None:
    repo.create_branch(BRANCH)
    first = repo.commit_files(BRANCH, FILES, "infra: proposal")
    fixed = {"Dockerfile": 'FROM python:3.11.9-slim-bookworm\nUSER 10001\nCMD ["python"]\n'}
    second = repo.commit_files(BRANCH, fixed, "infra: correction")

    assert git(repo.repo_path, "rev-parse", f"{second}^").strip() == first
    assert repo.read_files(BRANCH, ["Dockerfile", "compose.yaml"]) == {
        "Dockerfile": fixed["Dockerfile"],
        "compose.yaml": FILES["compose.yaml"],
    }
    diff = repo.diff("main", BRANCH)
    assert '+CMD ["python"]' in diff
    assert "+services: {}" in diff
    pr1 = repo.open_pull_request(BRANCH, "Infra setup")
    pr2 = repo.open_pull_request(BRANCH, "Infra setup")
    assert pr1.id == pr2.id
    assert pr1.url.startswith("file://")
    assert pr1.url.endswith(f"#pr/{pr1.id}")
    assert pr2.head == second
    assert pr2.base == "main"
    assert pr2.branch == BRANCH


def test_merge_creates_real_merge_commit_and_updates_checkout(repo: GitProvider, git: Git) -> None:
    repo.create_branch(BRANCH)
    head = repo.commit_files(BRANCH, FILES, "infra: proposal")
    repo.commit_files("main", {"NOTES.md": "moving main\n"}, "docs")
    main_before = repo.head("main")

    merged = repo.merge(BRANCH)

    root = repo.repo_path
    parents = git(root, "rev-list", "--parents", "-n", "1", merged).split()[1:]
    assert parents == [main_before, head]
    assert repo.head("main") == merged
    # main is checked out: its work tree follows the merge and is clean.
    assert (root / "services/api/Dockerfile").read_text() == FILES["services/api/Dockerfile"]
    assert git(root, "status", "--porcelain") == ""


def test_a_merged_pr_still_shows_the_diff_it_was_merged_with(repo: GitProvider) -> None:
    repo.create_branch(BRANCH)
    head = repo.commit_files(BRANCH, FILES, "infra: proposal")
    before = repo.diff("main", BRANCH)
    repo.commit_files("main", {"NOTES.md": "moving main\n"}, "docs")
    repo.merge(BRANCH)
    repo.commit_files("main", {"LATER.md": "after the merge\n"}, "docs")

    assert repo.diff("main", head) == ""  # head is in main now: the three-dot diff is empty
    assert repo.merged_diff("main", head) == before  # what the PR was merged with
    assert "NOTES.md" not in before
    assert "LATER.md" not in before
    repo.create_branch("feature/open")
    open_head = repo.commit_files("feature/open", {"x.txt": "x\n"}, "open")
    assert repo.merged_diff("main", open_head) == repo.diff("main", open_head)  # not merged


def test_merge_conflict_leaves_nothing_half_done(repo: GitProvider, git: Git) -> None:
    repo.create_branch(BRANCH)
    repo.commit_files(BRANCH, {"README.md": "# from branch\n"}, "branch edit")
    repo.commit_files("main", {"README.md": "# from main\n"}, "main edit")
    before = _snapshot(repo, git)
    with pytest.raises(ConflictError, match=r"README\.md"):
        repo.merge(BRANCH)
    assert _snapshot(repo, git)[0] == before[0]
    assert git(repo.repo_path, "status", "--porcelain") == ""


def test_create_existing_branch_and_missing_branch(repo: GitProvider) -> None:
    repo.create_branch(BRANCH)
    assert repo.branch_exists(BRANCH)
    assert not repo.branch_exists("nope")
    with pytest.raises(ConflictError, match="already exists"):
        repo.create_branch(BRANCH)
    with pytest.raises(NotFoundError):
        repo.commit_files("nope", {"a.txt": "x"}, "m")
    with pytest.raises(PathError, match="invalid branch name"):
        repo.create_branch("bad..name")


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/etc/passwd", "absolute"),
        ("../outside.txt", r"'\.\.'"),
        ("services/../../outside.txt", r"'\.\.'"),
        (".git/config", r"\.git"),
        ("sub/.git/hooks/pre-commit", r"\.git"),
        (".GIT/config", r"\.git"),
        ("dir\\file", "backslash"),
        ("nul\x00byte", "NUL"),
        ("a//b", "empty"),
        ("./a", "'.'"),
        ("", "empty"),
        ("worker/notes.md\n100644 " + "0" * 40 + "\t.github/workflows/evil.yml", "control"),
        ("a\rb", "control"),
        ("title\x1b]0;pwned\x07.md", "control"),
        ("del\x7f.md", "control"),
        ("--output=x", "starting with '-'"),
        ("services/-rf", "starting with '-'"),
    ],
)
def test_bad_paths_rejected_and_nothing_written(
    repo: GitProvider, git: Git, path: str, reason: str
) -> None:
    repo.create_branch(BRANCH)
    before = _snapshot(repo, git)
    with pytest.raises(PathError, match=reason):
        repo.commit_files(BRANCH, {"ok.txt": "fine\n", path: "evil\n"}, "m")
    assert _snapshot(repo, git) == before


def test_a_path_is_one_index_record_whatever_characters_it_holds(
    repo: GitProvider, git: Git
) -> None:
    # "--index-info" without -z reads C-quoted paths: '"q".md' would land as 'q.md'
    files = {'"q".md': "quoted\n", '"d"/f.md': "dir\n", "ç/ünï cödé.md": "utf-8\n"}
    repo.create_branch(BRANCH)
    sha = repo.commit_files(BRANCH, files, "m")
    changed = git(repo.repo_path, "diff-tree", "-r", "-z", "--name-only", "--no-commit-id", sha)
    assert sorted(p for p in changed.split("\0") if p) == sorted(files)
    assert repo.read_files(BRANCH, list(files)) == files


def test_symlink_in_branch_tree_escaping_is_rejected(
    repo: GitProvider, git: Git, tmp_path: Path
) -> None:
    root = repo.repo_path
    os.symlink("../../outside", root / "escape")
    git(root, "add", "escape")
    git(root, "commit", "-q", "-m", "add link")
    os.unlink(root / "escape")  # only the committed tree holds the link now
    git(root, "checkout", "-q", "--", "escape")
    repo.create_branch(BRANCH)
    before = _snapshot(repo, git)
    with pytest.raises(PathError, match=r"symlink 'escape'.*outside the repository"):
        repo.commit_files(BRANCH, {"escape/pwned.txt": "x\n"}, "m")
    assert _snapshot(repo, git) == before
    assert not (tmp_path / "outside").exists()


def test_symlink_in_work_tree_escaping_is_rejected(
    repo: GitProvider, git: Git, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, repo.repo_path / "deploy")  # untracked, in the checked-out tree
    repo.create_branch(BRANCH)
    before = _snapshot(repo, git)
    with pytest.raises(PathError, match="symlink 'deploy'"):
        repo.commit_files(BRANCH, {"deploy/Dockerfile": "FROM x\n"}, "m")
    assert _snapshot(repo, git) == before
    assert list(outside.iterdir()) == []


def test_concurrent_writer_is_detected(repo: GitProvider, git: Git) -> None:
    repo.create_branch(BRANCH)
    original = repo._move_ref

    def racing(branch: str, new: str, old: str) -> None:
        git(repo.repo_path, "commit-tree", "-m", "x", git(repo.repo_path, "write-tree").strip())
        other = git(
            repo.repo_path,
            "commit-tree",
            "-p",
            old,
            "-m",
            "other",
            git(repo.repo_path, "rev-parse", f"{old}^{{tree}}").strip(),
        ).strip()
        git(repo.repo_path, "update-ref", f"refs/heads/{branch}", other)
        original(branch, new, old)

    repo._move_ref = racing  # type: ignore[method-assign]
    with pytest.raises(ConflictError, match="moved"):
        repo.commit_files(BRANCH, {"a.txt": "a\n"}, "m")


def test_commit_to_checked_out_branch_keeps_local_edits(repo: GitProvider, git: Git) -> None:
    root = repo.repo_path
    (root / "README.md").write_text("# edited locally, not committed\n")
    main_before = repo.head("main")
    with pytest.raises(ConflictError, match="local changes"):
        repo.commit_files("main", {"README.md": "# agent version\n"}, "m")
    assert repo.head("main") == main_before
    assert (root / "README.md").read_text() == "# edited locally, not committed\n"
    # A file the user did not touch is written through to the checkout.
    repo.commit_files("main", {"docs/infra.md": "notes\n"}, "docs")
    assert (root / "docs/infra.md").read_text() == "notes\n"
    assert git(root, "status", "--porcelain") == " M README.md\n"
