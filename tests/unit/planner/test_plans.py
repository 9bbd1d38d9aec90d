"""Properties of what the rule-based planner proposes on the sample repositories."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from backend.exceptions import ValidationError
from backend.module_map import parse_module_map
from backend.planner import COMPOSE_PATH, WORKFLOW_PATH, plan

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "repos"
ALL = ["python-api", "node-web", "go-svc", "java-app", "multi"]


def _dockerfiles(files: dict[str, str]) -> dict[str, str]:
    return {p: t for p, t in files.items() if Path(p).name == "Dockerfile"}


def _stages(text: str) -> list[str]:
    return re.findall(r"(?m)^FROM\s+(\S+)", text)


@pytest.mark.parametrize("sample", ALL)
def test_dockerfiles_pinned_multistage_numeric_user(sample: str) -> None:
    files = plan(SAMPLES / sample)
    assert _dockerfiles(files)
    for path, text in _dockerfiles(files).items():
        images = _stages(text)
        assert len(images) == 2, path  # build + runtime
        for image in images:
            name, _, tag = image.rpartition(":")
            assert name, image
            assert tag != "latest", image
            assert re.search(r"\d+\.\d+", tag), image
        users = re.findall(r"(?m)^USER\s+(\S+)", text)
        assert users == ["10001"], path
        assert "--chown=10001:10001" in text
        assert "ADD " not in text
        assert "apt-get" not in text
        assert "curl" not in text
        assert re.search(r"(?m)^(CMD|ENTRYPOINT) \[", text)  # exec form


@pytest.mark.parametrize(
    ("sample", "path", "port", "probe"),
    [
        ("python-api", "Dockerfile", 8000, '"python", "-c"'),
        ("node-web", "Dockerfile", 3000, '"node", "-e"'),
        ("go-svc", "Dockerfile", 8080, "/dev/tcp/127.0.0.1/8080"),
        ("java-app", "Dockerfile", 8081, "/dev/tcp/127.0.0.1/8081"),
        ("multi", "web/Dockerfile", 8090, '"node", "-e"'),
    ],
)
def test_services_have_healthcheck_and_expose(
    sample: str, path: str, port: int, probe: str
) -> None:
    text = plan(SAMPLES / sample)[path]
    assert f"EXPOSE {port}" in text
    healthcheck = text[text.index("HEALTHCHECK") :]
    assert probe in healthcheck
    assert str(port) in healthcheck


def test_jobs_and_libraries() -> None:
    files = plan(SAMPLES / "multi")
    worker = files["services/worker/Dockerfile"]
    assert "HEALTHCHECK" not in worker
    assert "EXPOSE" not in worker
    assert "libs/shared/Dockerfile" not in files  # libraries are built in CI, not deployed
    assert "shared:" in files[WORKFLOW_PATH]


def test_lockfile_installs() -> None:
    assert "RUN npm ci " in plan(SAMPLES / "node-web")["Dockerfile"]
    assert "yarn install --frozen-lockfile" in plan(SAMPLES / "multi")["web/Dockerfile"]
    python = plan(SAMPLES / "python-api")["Dockerfile"]
    assert "pip install --no-cache-dir -r requirements.txt" in python
    assert '--host", "0.0.0.0", "--port", "8000"' in python
    assert "cp target/orders-service-0.0.1.jar" in plan(SAMPLES / "java-app")["Dockerfile"]


@pytest.mark.parametrize("sample", ALL)
def test_compose_binds_loopback_and_is_hardened(sample: str) -> None:
    compose = yaml.safe_load(plan(SAMPLES / sample)[COMPOSE_PATH])
    assert compose["services"]
    for name, service in compose["services"].items():
        for port in service.get("ports", []):
            assert port.startswith("127.0.0.1:"), (name, port)
        assert service["read_only"] is True
        assert service["cap_drop"] == ["ALL"]
        assert "no-new-privileges:true" in service["security_opt"]
        assert not {"privileged", "network_mode", "volumes", "cap_add"} & set(service)


def test_compose_contexts_follow_module_paths() -> None:
    services = yaml.safe_load(plan(SAMPLES / "multi")[COMPOSE_PATH])["services"]
    assert {n: s["build"]["context"] for n, s in services.items()} == {
        "api": "./services/api",
        "worker": "./services/worker",
        "web": "./web",
    }
    assert services["api"]["ports"] == ["127.0.0.1:5001:5001"]
    assert "ports" not in services["worker"]


@pytest.mark.parametrize("sample", ALL)
def test_workflow_least_privilege_and_pinned(sample: str) -> None:
    text = plan(SAMPLES / sample)[WORKFLOW_PATH]
    doc = yaml.safe_load(text)
    assert doc[True] == ["push", "pull_request"]  # YAML 1.1 reads `on` as True
    assert doc["permissions"] == {"contents": "read"}
    assert "pull_request_target" not in text
    assert "github.event" not in text
    uses = re.findall(r"uses:\s*(\S+)", text)
    assert uses
    assert all(re.fullmatch(r"actions/[\w-]+@[0-9a-f]{40}", u) for u in uses)
    for job in doc["jobs"].values():
        assert job["steps"][0]["with"]["persist-credentials"] is False


def test_workflow_language_steps() -> None:
    runs = {
        s: plan(SAMPLES / s)[WORKFLOW_PATH]
        for s in ["python-api", "node-web", "go-svc", "java-app"]
    }
    assert "python -m pytest -q" in runs["python-api"]
    assert "npm ci" in runs["node-web"]
    assert "npm run test" in runs["node-web"]
    assert "go test ./..." in runs["go-svc"]
    assert "go-version-file: go.mod" in runs["go-svc"]
    assert "mvn -B verify" in runs["java-app"]
    assert 'java-version: "17"' in runs["java-app"]


def test_given_module_map_wins_over_detection() -> None:
    module_map = parse_module_map(
        json.dumps(
            {
                "modules": [
                    {
                        "name": "api",
                        "path": ".",
                        "language": "python",
                        "kind": "service",
                        "port": 9000,
                    }
                ]
            }
        )
    )
    files = plan(SAMPLES / "python-api", module_map)
    assert "EXPOSE 9000" in files["Dockerfile"]
    assert '"127.0.0.1:9000:9000"' in files[COMPOSE_PATH]


def test_plan_errors(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="not a directory"):
        plan(tmp_path / "missing")
    with pytest.raises(ValidationError, match="no module found"):
        plan(tmp_path)
    module_map = parse_module_map(
        json.dumps({"modules": [{"name": "x", "path": "nope", "language": "go", "kind": "job"}]})
    )
    with pytest.raises(ValidationError, match="'nope' is not a directory"):
        plan(tmp_path, module_map)


def test_plan_is_deterministic() -> None:
    assert plan(SAMPLES / "multi") == plan(SAMPLES / "multi")
