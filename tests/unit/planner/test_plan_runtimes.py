"""Runtimes from the manifests' version ranges, and start commands for the forms a manifest
takes beyond the sample repositories (small trees built per case)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.planner import plan, propose
from backend.planner.detect import inspect_module
from backend.planner.runtimes import (
    choose,
    go_runtime,
    pep440_allows,
    rust_runtime,
    semver_allows,
)


@pytest.mark.parametrize(
    ("spec", "version"),
    [
        (">=3.8", "3.11"),
        (">=3.10,<3.12", "3.11"),
        (">=3.9,<3.11", "3.10"),
        ("<3.11", "3.10"),
        (">=3.12", "3.12"),
        ("==3.13.*", "3.13"),
        ("~=3.12", "3.12"),
        ("!=3.11.*,>=3.10", "3.12"),
        (">=3.9, <3.10", "3.9"),
    ],
)
def test_requires_python_picks_an_image_it_allows(spec: str, version: str) -> None:
    assert choose("python", pep440_allows(spec), spec).version == version


@pytest.mark.parametrize(
    ("spec", "version"),
    [
        (">=18", "20"),
        ("^18.17.0", "18"),
        ("18.x", "18"),
        ("~22.3", "22"),
        (">=20 <21", "20"),
        ("16 || 18", "18"),
        ("22.x || 24.x", "22"),
        (">=18.0.0 <20.0.0", "18"),
        ("18 - 22", "20"),
    ],
)
def test_engines_node_picks_an_image_it_allows(spec: str, version: str) -> None:
    assert choose("node", semver_allows(spec), spec).version == version


def test_no_pinned_image_fits_says_so() -> None:
    runtime = choose("python", pep440_allows(">=3.14"), "requires-python >=3.14")
    assert runtime.image == "python:3.14-slim-bookworm"
    assert runtime.note is not None
    assert "no pinned python image" in runtime.note


@pytest.mark.parametrize(
    ("gomod", "image"),
    [
        ("module x\n\ngo 1.21\n", "golang:1.22.5-bookworm"),
        ("module x\n\ngo 1.23.0\n", "golang:1.23.2-bookworm"),
        ("module x\n\ngo 1.23.4\n", "golang:1.23.4-bookworm"),  # the image's 1.23.2 is older
        ("module x\n\ngo 1.24.0\n", "golang:1.24.1-bookworm"),
        ("module x\n\ngo 1.21\n\ntoolchain go1.22.7\n", "golang:1.22.7-bookworm"),
    ],
)
def test_go_image_is_at_least_the_directive(gomod: str, image: str) -> None:
    assert go_runtime(gomod).image == image


def test_rust_toolchain_forms(tmp_path: Path) -> None:
    (tmp_path / "rust-toolchain").write_text("1.81.0\n")
    assert rust_runtime(tmp_path, {}).image == "rust:1.81.0-slim-bookworm"
    (tmp_path / "rust-toolchain").write_text('[toolchain]\nchannel = "1.83"\n')
    assert rust_runtime(tmp_path, {}).image == "rust:1.83.0-slim-bookworm"
    (tmp_path / "rust-toolchain").unlink()
    msrv = rust_runtime(tmp_path, {"package": {"rust-version": "1.85"}})
    assert msrv.image == "rust:1.85.0-slim-bookworm"
    (tmp_path / "rust-toolchain.toml").write_text('[toolchain]\nchannel = "nightly"\n')
    nightly = rust_runtime(tmp_path, {})
    assert nightly.note is not None
    assert "nightly" in nightly.note


def _node(tmp_path: Path, pkg: dict, files: dict[str, str]) -> Path:
    (tmp_path / "package.json").write_text(json.dumps(pkg))
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("start", "files", "argv"),
    [
        (
            "NODE_ENV=production node --enable-source-maps server.js",
            ["server.js"],
            "node --enable-source-maps server.js",
        ),
        ("nodemon src/index.js", ["src/index.js"], "node src/index.js"),
        ("node dist/main.js", [], "node dist/main.js"),  # built by the build script
        ("next start", [], "npm start"),
    ],
)
def test_node_start_forms(tmp_path: Path, start: str, files: list[str], argv: str) -> None:
    pkg = {
        "name": "web",
        "scripts": {"start": start, "build": "tsc"},
        "dependencies": {"express": "4.19.2"},
    }
    repo = _node(tmp_path, pkg, {f: "require('express')().listen(3000)\n" for f in files})
    assert " ".join(inspect_module(repo, "node").start.command(3000)) == argv  # type: ignore[union-attr]


def test_npm_start_gets_a_writable_cache(tmp_path: Path) -> None:
    repo = _node(tmp_path, {"name": "web", "scripts": {"start": "next start"}}, {})
    assert "npm_config_cache=/tmp/.npm" in plan(repo)["Dockerfile"]


def test_a_start_script_naming_a_missing_file_is_a_note(tmp_path: Path) -> None:
    repo = _node(
        tmp_path,
        {"name": "web", "scripts": {"start": "node server.js"}, "dependencies": {"express": "4"}},
        {"app.js": "require('express')().listen(3000)\n"},
    )
    proposal = propose(repo)
    assert proposal.modules[0].start == ["node", "app.js"]
    assert proposal.modules[0].notes == ["package.json start runs server.js, which does not exist"]


def _python(tmp_path: Path, requirements: str, files: dict[str, str]) -> Path:
    (tmp_path / "requirements.txt").write_text(requirements)
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_flask_with_gunicorn_and_factory(tmp_path: Path) -> None:
    repo = _python(
        tmp_path,
        "flask\ngunicorn\n",
        {
            "shop/__init__.py": "from flask import Flask\n\n\ndef create_app():\n"
            "    return Flask(__name__)\n",
            "test_shop.py": 'if __name__ == "__main__":\n    pass\n',
        },
    )
    start = inspect_module(repo, "python").start
    assert start is not None
    assert start.command(5000) == ["gunicorn", "--bind", "0.0.0.0:5000", "shop:create_app()"]


def test_main_script_never_a_test_or_client(tmp_path: Path) -> None:
    guard = 'if __name__ == "__main__":\n    main()\n'
    repo = _python(
        tmp_path,
        "",
        {"client.py": guard, "test_all.py": guard, "benchmark.py": guard, "worker.py": guard},
    )
    start = inspect_module(repo, "python").start
    assert start is not None
    assert start.command(None) == ["python", "worker.py"]


def test_java_release_newer_than_any_pinned_jdk_is_a_note(tmp_path: Path) -> None:
    (tmp_path / "pom.xml").write_text(
        "<project><artifactId>svc</artifactId><version>1.0</version>"
        "<properties><java.version>23</java.version></properties></project>"
    )
    assert propose(tmp_path).modules[0].notes == ["Java 23: no pinned JDK that new; built with 21"]


def test_procfile_web_binds_the_port_for_any_language(tmp_path: Path) -> None:
    repo = _node(
        tmp_path,
        {"name": "web", "dependencies": {"express": "4"}},
        {"Procfile": "web: node web.js --port $PORT\nworker: node jobs.js\n", "web.js": ""},
    )
    module = propose(repo).modules[0]
    assert module.start == ["node", "web.js", "--port", "3000"]
    assert module.start_source == "Procfile web"


def test_setup_py_module_is_planned_not_dropped(tmp_path: Path) -> None:
    (tmp_path / "setup.py").write_text("from setuptools import setup\n\nsetup(name='tool')\n")
    (tmp_path / "report.py").write_text('if __name__ == "__main__":\n    print("ok")\n')
    assert propose(tmp_path).modules[0].start == ["python", "report.py"]
