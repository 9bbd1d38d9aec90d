"""Which files the Dockerfile scanners look at: by name in any case, and by content."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.gates.targets import dockerfile_targets, is_dockerfile, looks_like_dockerfile


@pytest.mark.parametrize(
    "name",
    [
        "Dockerfile",
        "dockerfile",
        "DOCKERFILE",
        "svc/Dockerfile.dev",
        "Dockerfile-prod",
        "Dockerfile_ci",
        "app_Dockerfile",
        "api-dockerfile",
        "x.dockerfile",
        "prod.Dockerfile",
        "Containerfile",
        "containerfile.arm64",
    ],
)
def test_dockerfile_names_in_any_case(name: str) -> None:
    assert is_dockerfile(name)


@pytest.mark.parametrize(
    "name",
    [
        "Dockerfile.dockerignore",
        ".dockerignore",
        "backend/gates/scanners/dockerfile.py",
        "dockerfiles.py",
        "docs/Dockerfile.md",
        "mydockerfile",
        "syntax/dockerfile.vim",
        "compose.yaml",
    ],
)
def test_companions_and_code_about_dockerfiles_are_not_dockerfiles_by_name(name: str) -> None:
    assert not is_dockerfile(name)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("FROM python:3.12\nUSER 1\n", True),
        ("# syntax=docker/dockerfile:1.7\nARG V=1\n", True),
        ("\n# build image\nARG PY=3.12\nfrom python:${PY} as build\n", True),
        ("FROM --platform=$BUILDPLATFORM golang:1.22 AS build\n", True),
        ("FROM \\\n  python:3.12 \\\n  AS build\n", True),
        ("from __future__ import annotations\n", False),
        ("# comment\nfrom os import path\n", False),
        ("SELECT *\nFROM users\n", False),
        ("hello\nFROM python:3.12\n", False),
        ("", False),
    ],
)
def test_dockerfiles_by_content(text: str, expected: bool) -> None:
    assert looks_like_dockerfile(text) is expected


def test_targets_combine_name_and_content(tmp_path: Path) -> None:
    files = {
        "build/image.txt": "# syntax=docker/dockerfile:1\nFROM python:latest\n",
        "docs/Dockerfile.md": "# How we build\n",
        "app.py": "from app import main\n",
        "Dockerfile-prod": "",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert dockerfile_targets(tmp_path, sorted(files)) == ["Dockerfile-prod", "build/image.txt"]
