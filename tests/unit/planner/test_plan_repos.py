"""``infra plan`` on sample repositories modelled on real public layouts (see the README of
``tests/fixtures/plan_repos``): each proposal starts what the repository itself declares,
on the runtime its manifests ask for, on a host port of its own.

The assertions read the proposed files (``plan()``), not internal facts: the Dockerfile's
``CMD``/``ENTRYPOINT``, its ``FROM`` lines and the compose ports are what would run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from backend.exceptions import ValidationError
from backend.planner import COMPOSE_PATH, WORKFLOW_PATH, plan, propose

REPOS = Path(__file__).resolve().parents[2] / "fixtures" / "plan_repos"

# sample → (Dockerfile path, start argv, an image the Dockerfile must build or run on, port)
EXPECTED: dict[str, tuple[str, list[str], str, int]] = {
    # Procfile `web:` wins; `.python-version` pins 3.12 (main: bare `python manage.py`, 3.11).
    "heroku-django": (
        "Dockerfile",
        ["gunicorn", "gettingstarted.wsgi", "--log-file", "-"],
        "python:3.12.4-slim-bookworm",
        8000,
    ),
    # Django convention with gunicorn in the requirements (main: bare `python manage.py`).
    "django-polls": (
        "Dockerfile",
        ["gunicorn", "mysite.wsgi:application", "--bind", "0.0.0.0:8000"],
        "python:3.11.9-slim-bookworm",
        8000,
    ),
    # Django without gunicorn: its own server on every interface.
    "django-dev": (
        "Dockerfile",
        ["python", "manage.py", "runserver", "0.0.0.0:8000", "--noreload"],
        "python:3.11.9-slim-bookworm",
        8000,
    ),
    # The Flask app object, not `client.py` (main) nor `app.run()` on 127.0.0.1.
    "flask-client-server": (
        "Dockerfile",
        ["flask", "--app", "server:app", "run", "--host", "0.0.0.0", "--port", "5000"],
        "python:3.11.9-slim-bookworm",
        5000,
    ),
    # requires-python ">=3.9,<3.11" rules out 3.11 (main: 3.11).
    "fastapi-src": (
        "Dockerfile",
        ["uvicorn", "inventory.main:app", "--host", "0.0.0.0", "--port", "8000"],
        "python:3.10.15-slim-bookworm",
        8000,
    ),
    # The server script of [project.scripts], not the client listed first nor run_tests.py.
    "pyproject-scripts": (
        "Dockerfile",
        ["weather-server"],
        "python:3.12.4-slim-bookworm",
        8080,
    ),
    # express-generator: `start: node ./bin/www` (main: `node index.js`, which does not exist).
    "express-generator": (
        "Dockerfile",
        ["node", "bin/www"],
        "node:20.18.0-bookworm-slim",
        3000,
    ),
    # `main: index.js` from `npm init` names no file; the server is server.js; node 18.x.
    "node-main-missing": (
        "Dockerfile",
        ["node", "server.js"],
        "node:18.20.4-bookworm-slim",
        8080,
    ),
    # go 1.24.0 needs a 1.24 toolchain (main: 1.22); the binary is the server's.
    "go-cmd": ("Dockerfile", ["/app/app"], "golang:1.24.1-bookworm", 8080),
    # rust-toolchain.toml pins 1.82.0 (main: 1.79.0).
    "rust-toolchain": ("Dockerfile", ["/app/app"], "rust:1.82.0-slim-bookworm", 8000),
}


def _argv(dockerfile: str) -> list[str]:
    lines = re.findall(r"(?m)^(?:CMD|ENTRYPOINT) (\[.*\])$", dockerfile)
    assert lines, dockerfile
    return list(json.loads(lines[-1]))


@pytest.mark.parametrize("sample", sorted(EXPECTED))
def test_start_command_runtime_and_port_follow_the_repository(sample: str) -> None:
    path, argv, image, port = EXPECTED[sample]
    files = plan(REPOS / sample)
    dockerfile = files[path]
    assert _argv(dockerfile) == argv
    assert image in re.findall(r"(?m)^FROM (\S+)", dockerfile)
    assert f"EXPOSE {port}" in dockerfile
    service = yaml.safe_load(files[COMPOSE_PATH])["services"][sample]
    assert service["ports"] == [f"127.0.0.1:{port}:{port}"]


def test_go_builds_the_server_main_package_and_names_the_others() -> None:
    proposal = propose(REPOS / "go-cmd")
    assert "-o /out/app ./cmd/linkd\n" in proposal.files["Dockerfile"]
    assert any("./cmd/linkctl" in note and "./tools/gen" in note for note in proposal.notes)


def test_rust_builds_the_package_binary_not_the_bench() -> None:
    assert (
        "install -D target/release/pastebin /out/app"
        in plan(REPOS / "rust-toolchain")["Dockerfile"]
    )


def test_ci_uses_the_same_runtime_as_the_image() -> None:
    assert 'python-version: "3.10"' in plan(REPOS / "fastapi-src")[WORKFLOW_PATH]
    assert 'python-version: "3.12"' in plan(REPOS / "heroku-django")[WORKFLOW_PATH]
    assert 'node-version: "18"' in plan(REPOS / "node-main-missing")[WORKFLOW_PATH]


def test_two_services_on_one_port_get_distinct_host_ports() -> None:
    services = yaml.safe_load(plan(REPOS / "polyglot")[COMPOSE_PATH])["services"]
    ports = {name: service["ports"] for name, service in services.items()}
    assert ports == {
        "admin": ["127.0.0.1:8080:8080"],
        "orders": ["127.0.0.1:8000:8000"],
        "users": ["127.0.0.1:8001:8000"],  # the container still listens on 8000
    }


def test_gradle_spring_boot_module_is_planned() -> None:
    files = plan(REPOS / "polyglot")
    dockerfile = files["admin/Dockerfile"]
    assert re.findall(r"(?m)^FROM (\S+)", dockerfile) == [
        "gradle:8.10.2-jdk21",  # JavaLanguageVersion.of(21)
        "eclipse-temurin:21.0.3_9-jre",
    ]
    assert "gradle --no-daemon -q bootJar -x test && cp build/libs/admin-0.1.0.jar" in dockerfile
    assert _argv(dockerfile) == ["java", "-XX:MaxRAMPercentage=75", "-jar", "/app/app.jar"]
    assert "gradle --no-daemon build" in files[WORKFLOW_PATH]


def test_unsupported_modules_are_named_not_dropped() -> None:
    compose = plan(REPOS / "polyglot")[COMPOSE_PATH]
    header = compose[: compose.index("services:")]
    assert "legacy/Gemfile: ruby is not supported" in header
    assert "billing/composer.json: php is not supported" in header
    skipped = {str(s) for s in propose(REPOS / "polyglot").skipped}
    assert skipped == {
        "legacy/Gemfile: ruby is not supported by the planner",
        "billing/composer.json: php is not supported by the planner",
    }


def test_a_manifest_shadowed_by_another_is_named(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module example.com/svc\n\ngo 1.22\n")
    (tmp_path / "main.go").write_text("package main\n\nfunc main() {}\n")
    (tmp_path / "package.json").write_text('{"name": "tooling", "scripts": {"lint": "x"}}')
    skipped = [str(s) for s in propose(tmp_path).skipped]
    assert skipped == ["package.json: not planned: the module here is planned from go.mod"]


def test_only_unsupported_modules_says_what_it_found(tmp_path: Path) -> None:
    (tmp_path / "Gemfile").write_text("source 'https://rubygems.org'\n")
    with pytest.raises(ValidationError, match="Gemfile: ruby is not supported"):
        plan(tmp_path)
