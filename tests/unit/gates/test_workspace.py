"""Path validation and the suppression-free temporary copy (no scanners)."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.exceptions import PathError
from backend.gates.workspace import prepared_copy, strip_inline_suppressions, validate_files


@pytest.mark.parametrize(
    "bad",
    [
        "/etc/passwd",
        "../outside",
        "a/../../b",
        "a/..",
        ".git/config",
        "sub/.git/hooks/pre-commit",
        "",
        "C:/x",
        "a\\b",
        "a\x00b",
        ".",
    ],
)
def test_bad_paths_are_rejected(bad: str) -> None:
    with pytest.raises(PathError):
        validate_files({bad: "x"})


def test_nothing_is_written_when_one_path_is_bad(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    with pytest.raises(PathError), prepared_copy({"ok/Dockerfile": "FROM a:1\n", "../evil": "x"}):
        pass
    assert list(tmp_path.iterdir()) == []


def test_duplicates_and_file_directory_clashes_are_rejected() -> None:
    with pytest.raises(PathError):
        validate_files({"a/b": "1", "./a/b": "2"})
    with pytest.raises(PathError):
        validate_files({"a": "1", "a/b": "2"})


def test_good_paths_are_normalised() -> None:
    assert [
        str(p) for p in validate_files({"./svc//Dockerfile": "x", ".github/workflows/ci.yml": "y"})
    ] == [
        "svc/Dockerfile",
        ".github/workflows/ci.yml",
    ]


def test_copy_drops_suppression_files_and_pragmas_and_is_removed() -> None:
    files = {
        ".hadolint.yaml": "ignored: [DL3007]\n",
        "svc/.semgrepignore": "*\n",
        ".secrets.baseline": "{}",
        "Dockerfile": "# hadolint ignore=DL3007\nFROM python:latest\n",
        "app.env": "KEY=AKIA" + "ABCDEFGHIJKLMNOP  # pragma: allowlist secret\n",
    }
    with prepared_copy(files) as ws:
        root = ws.root
        assert ws.files == ("Dockerfile", "app.env")
        assert set(ws.removed) == {".hadolint.yaml", "svc/.semgrepignore", ".secrets.baseline"}
        assert (root / "Dockerfile").read_text() == "\nFROM python:latest\n"
        assert "allowlist" not in (root / "app.env").read_text()
    assert not root.exists()


def _fail_inside_copy(roots: list[Path]) -> None:
    with prepared_copy({"a.txt": "x"}) as ws:
        roots.append(ws.root)
        raise RuntimeError("boom")


def test_copy_is_removed_on_error() -> None:
    roots: list[Path] = []
    with pytest.raises(RuntimeError, match="boom"):
        _fail_inside_copy(roots)
    assert roots
    assert not roots[0].exists()


def test_directory_copy_skips_git_and_symlinks(tmp_path: Path) -> None:
    src = tmp_path / "repo"
    (src / ".git").mkdir(parents=True)
    (src / ".git" / "config").write_text("[core]\n")
    (src / "Dockerfile").write_text("FROM a:1\n")
    secret = tmp_path / "outside.pem"
    secret.write_text("secret\n")
    (src / "link.pem").symlink_to(secret)
    with prepared_copy(src) as ws:
        assert ws.files == ("Dockerfile",)
        assert ws.ignored == ("link.pem",)
    with pytest.raises(PathError), prepared_copy(tmp_path / "missing"):
        pass


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("RUN x # nosemgrep: rule\n", "RUN x \n"),
        ("x = 1  // nosem\n", "x = 1  \n"),
        ("k=v # pragma: allowlist secret\n", "k=v \n"),
        ("# pragma: allowlist nextline secret\nk=v\n", "\nk=v\n"),
        ("# hadolint global ignore=DL3007\nFROM a\n", "\nFROM a\n"),
        ("token=x # gitleaks:allow\n", "token=x \n"),
        ("plain line\n", "plain line\n"),
    ],
)
def test_inline_suppressions_are_stripped_line_by_line(text: str, expected: str) -> None:
    assert strip_inline_suppressions(text) == expected


def test_symlinks_inside_the_tree_are_scanned_under_their_own_name(tmp_path: Path) -> None:
    src = tmp_path / "repo"
    (src / "shared").mkdir(parents=True)
    (src / "shared" / "base.txt").write_text("FROM python:3.12\nUSER root\n")
    (src / "ci").mkdir()
    (src / "ci" / "build.yml").write_text("on: pull_request_target\n")
    (src / "deploy").mkdir()
    (src / "deploy" / "Dockerfile").symlink_to("../shared/base.txt")
    (src / ".github").mkdir()
    (src / ".github" / "workflows").symlink_to("../ci")
    (src / "again").symlink_to(".")
    (src / "ci" / "up").symlink_to("../ci")
    (src / "gone.env").symlink_to("missing.env")
    with prepared_copy(src) as ws:
        assert ws.files == (
            ".github/workflows/build.yml",
            "ci/build.yml",
            "deploy/Dockerfile",
            "shared/base.txt",
        )
        assert (ws.root / "deploy" / "Dockerfile").read_text() == "FROM python:3.12\nUSER root\n"
        assert not any(p.is_symlink() for p in ws.root.rglob("*"))
        notes = {(f.file, f.rule, f.severity) for f in ws.findings}
    assert notes == {
        ("deploy/Dockerfile", "symlink-followed", "info"),
        (".github/workflows", "symlink-followed", "info"),
        ("again", "symlink-loop", "info"),
        ("ci/up", "symlink-loop", "info"),
        (".github/workflows/up", "symlink-loop", "info"),
        ("gone.env", "symlink-broken", "info"),
    }
    assert ws.ignored == (".github/workflows/up", "again", "ci/up", "gone.env")


def test_a_symlink_leaving_the_tree_is_a_blocking_finding_and_never_read(tmp_path: Path) -> None:
    src = tmp_path / "repo"
    (src / "keys").mkdir(parents=True)
    outside = tmp_path / "id_rsa"
    outside.write_text("secret\n")
    (src / "keys" / "deploy.pem").symlink_to(outside)
    (src / "etc").symlink_to("/etc")
    (src / "up").symlink_to("../repo/../id_rsa")
    with prepared_copy(src) as ws:
        assert ws.files == ()
        found = [(f.file, f.rule, f.severity) for f in ws.findings]
    assert found == [
        ("etc", "symlink-outside-pr", "error"),
        ("keys/deploy.pem", "symlink-outside-pr", "error"),
        ("up", "symlink-outside-pr", "error"),
    ]
    assert all(f.blocking for f in ws.findings)
