"""``correct()``: each rule fixes exactly what its finding names."""

from __future__ import annotations

import re

import pytest
import yaml

from backend.planner.fixer import correct

DOCKERFILE = """FROM python:3.11.9-slim-bookworm AS build
RUN pip install -r requirements.txt

FROM python:latest
WORKDIR /app
ADD https://example.com/tool.tgz /opt/
ADD app.py /app/
USER root
ENV API_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789
EXPOSE 8000
CMD python app.py --port 8000
"""


def _f(
    file: str, rule: str, line: int | None = None, tool: str = "hadolint", message: str = ""
) -> dict[str, object]:
    return {
        "tool": tool,
        "rule": rule,
        "file": file,
        "line": line,
        "severity": "error",
        "message": message,
    }


def _fix(rule: str, line: int | None = None, tool: str = "hadolint", message: str = "") -> str:
    return correct({"Dockerfile": DOCKERFILE}, [_f("Dockerfile", rule, line, tool, message)])[
        "Dockerfile"
    ]


def test_latest_tag_is_pinned() -> None:
    out = _fix("DL3007")
    assert "FROM python:3.11.9-slim-bookworm\n" in out
    assert ":latest" not in out
    assert _fix("dockerfile-latest-tag", tool="dockerfile") == out


def test_untagged_image_is_pinned() -> None:
    out = correct(
        {"Dockerfile": "FROM node\nUSER 10001\n"},
        [_f("Dockerfile", "dockerfile-untagged-image", 1, "dockerfile")],
    )["Dockerfile"]
    assert out.startswith("FROM node:20.18.0-bookworm-slim\n")


def test_root_user_becomes_numeric_non_root() -> None:
    out = _fix("DL3002", 8)
    assert "USER root" not in out
    assert re.findall(r"(?m)^USER .*$", out) == ["USER 10001"]
    assert out.index("USER 10001") < out.index("EXPOSE 8000")  # before the runtime lines


def test_missing_user_is_added_in_final_stage_only() -> None:
    text = (
        "FROM golang:1.22.5-bookworm AS build\nRUN go build\nFROM debian:12.6-slim\n"
        'COPY --from=build /out/app /app\nCMD ["/app"]\n'
    )
    out = correct(
        {"svc/Dockerfile": text}, [_f("svc/Dockerfile", "dockerfile-no-user", None, "dockerfile")]
    )
    lines = out["svc/Dockerfile"].splitlines()
    assert lines.index("USER 10001") == lines.index('CMD ["/app"]') - 1
    assert lines.index("USER 10001") > lines.index("FROM debian:12.6-slim")


def test_distroless_gets_its_nonroot_uid() -> None:
    text = 'FROM gcr.io/distroless/static-debian12:nonroot\nCOPY app /app\nCMD ["/app"]\n'
    out = correct({"Dockerfile": text}, [_f("Dockerfile", "DL3002")])["Dockerfile"]
    assert "USER 65532" in out


def test_add_url_removed_and_local_add_becomes_copy() -> None:
    out = _fix("dockerfile-add-url", 6, "dockerfile")
    assert "ADD https://" not in out
    assert "# removed by the Infra agent: ADD of a remote URL" in out
    assert "COPY app.py /app/" in _fix("DL3020", 7)


def test_pip_no_cache_dir_and_json_cmd() -> None:
    assert "pip install --no-cache-dir -r requirements.txt" in _fix("DL3042", 2)
    assert 'CMD ["python", "app.py", "--port", "8000"]' in _fix("DL3025", 11)


def test_apt_rules() -> None:
    text = "FROM debian:12.6-slim\nRUN apt-get update && apt-get install -y ca-certificates\n"
    out = correct({"Dockerfile": text}, [_f("Dockerfile", "DL3015"), _f("Dockerfile", "DL3009")])
    assert out["Dockerfile"].splitlines()[1] == (
        "RUN apt-get update && apt-get install --no-install-recommends -y ca-certificates"
        " && rm -rf /var/lib/apt/lists/*"
    )


def test_secret_in_dockerfile_env_is_removed() -> None:
    out = _fix("GitHub Token", 9, "detect-secrets", "possible secret")
    assert "ghp_" not in out
    assert "ENV API_TOKEN" not in out
    assert "# secret API_TOKEN removed from the image; provide it at run time" in out
    assert out.count("\n") == DOCKERFILE.count("\n")  # other findings' lines stay valid


def test_unnamed_file_and_unknown_rule_unchanged() -> None:
    files = {"Dockerfile": DOCKERFILE, "other/Dockerfile": DOCKERFILE}
    out = correct(files, [_f("other/Dockerfile", "DL9999", message="something new")])
    assert out == files
    assert correct(files, []) == files


def test_scanner_temp_paths_match_proposal_paths() -> None:
    out = correct({"Dockerfile": DOCKERFILE}, [_f("/tmp/gate-x/Dockerfile", "DL3007")])
    assert ":latest" not in out["Dockerfile"]


COMPOSE = """services:
  api:
    build: {context: .}
    ports:
      - "0.0.0.0:8000:8000"
      - "9000:9000"
      - "7000"
      - {target: 80, published: 8080}
    privileged: true
    network_mode: host
    cap_add: [SYS_ADMIN]
    volumes:
      - /var/run/docker.sock:/var/run/docker.sock
      - data:/data
    environment:
      DB_PASSWORD: hunter2hunter2secret
      LOG_LEVEL: info
"""


def _compose(rule: str, line: int | None = None, tool: str = "compose") -> dict:
    out = correct({"compose.yaml": COMPOSE}, [_f("compose.yaml", rule, line, tool)])
    return yaml.safe_load(out["compose.yaml"])["services"]["api"]


def test_compose_ports_bound_to_loopback() -> None:
    service = _compose("compose-port-all-interfaces", 5)
    assert service["ports"] == [
        "127.0.0.1:8000:8000",
        "127.0.0.1:9000:9000",
        "127.0.0.1::7000",
        {"target": 80, "published": 8080, "host_ip": "127.0.0.1"},
    ]
    assert service["privileged"] is True  # not named, not touched


def test_compose_privileged_host_network_socket_caps() -> None:
    assert "privileged" not in _compose("compose-privileged")
    assert "network_mode" not in _compose("compose-host-network")
    assert _compose("compose-docker-socket")["volumes"] == ["data:/data"]
    assert "cap_add" not in _compose("compose-dangerous-capability", tool="semgrep")


def test_compose_secret_becomes_env_reference() -> None:
    out = correct(
        {"compose.yaml": COMPOSE}, [_f("compose.yaml", "Secret Keyword", 16, "detect-secrets")]
    )["compose.yaml"]
    assert "hunter2" not in out
    env = yaml.safe_load(out)["services"]["api"]["environment"]
    assert env == {
        "DB_PASSWORD": "${DB_PASSWORD:?set DB_PASSWORD in the environment}",
        "LOG_LEVEL": "info",
    }


WORKFLOW = """name: ci
on: [push, pull_request_target]
permissions: write-all
jobs:
  build:
    runs-on: ubuntu-24.04
    steps:
      - name: greet
        run: |
          echo "Title: ${{ github.event.pull_request.title }}"
          git checkout ${{ github.head_ref }}
        env:
          KEEP: "1"
      - name: deploy
        env:
          API_KEY: sk_live_abcdefghijklmnop
        run: ./deploy.sh
"""


def _workflow(*findings: dict[str, object]) -> tuple[str, dict]:
    out = correct({".github/workflows/ci.yml": WORKFLOW}, list(findings))
    text = out[".github/workflows/ci.yml"]
    doc = yaml.safe_load(text)
    return text, {("on" if k is True else k): v for k, v in doc.items()}


def test_pull_request_target_becomes_pull_request() -> None:
    text, doc = _workflow(
        _f(
            ".github/workflows/ci.yml",
            "gha-pull-request-target",
            2,
            "semgrep",
            "runs with the base repository's secrets",
        )
    )
    assert doc["on"] == ["push", "pull_request"]
    assert re.search(r"(?m)^on:", text)
    assert "sk_live_" in text  # a message mentioning secrets is not a secret finding


def test_permissions_least_privilege() -> None:
    _, doc = _workflow(_f(".github/workflows/ci.yml", "gha-permissions-write-all", 3, "semgrep"))
    assert doc["permissions"] == {"contents": "read"}
    assert list(doc)[:3] == ["name", "on", "permissions"]


def test_missing_permissions_added() -> None:
    bare = WORKFLOW.replace("permissions: write-all\n", "")
    out = correct(
        {".github/workflows/ci.yml": bare},
        [_f(".github/workflows/ci.yml", "gha-missing-top-level-permissions")],
    )
    assert yaml.safe_load(out[".github/workflows/ci.yml"])["permissions"] == {"contents": "read"}


def test_event_expressions_moved_to_env() -> None:
    _, doc = _workflow(
        _f(".github/workflows/ci.yml", "gha-event-interpolated-in-run", 9, "semgrep")
    )
    step = doc["jobs"]["build"]["steps"][0]
    assert "${{" not in step["run"]
    assert 'echo "Title: ${GITHUB_EVENT_PULL_REQUEST_TITLE}"' in step["run"]
    assert 'git checkout "${GITHUB_HEAD_REF}"' in step["run"]
    assert step["env"] == {
        "KEEP": "1",
        "GITHUB_EVENT_PULL_REQUEST_TITLE": "${{ github.event.pull_request.title }}",
        "GITHUB_HEAD_REF": "${{ github.head_ref }}",
    }


def test_workflow_secret_becomes_secrets_reference() -> None:
    text, doc = _workflow(
        _f(".github/workflows/ci.yml", "hardcoded-credential-assignment", 16, "semgrep")
    )
    assert "sk_live_" not in text
    assert doc["jobs"]["build"]["steps"][1]["env"]["API_KEY"] == "${{ secrets.API_KEY }}"


def test_private_key_and_aws_key_floor() -> None:
    files = {
        "deploy/key.pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK\n"
        "-----END RSA PRIVATE KEY-----\n",
        "config/app.env": "LOG=1\nAWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n",
    }
    out = correct(
        files,
        [
            _f("deploy/key.pem", "private-key", 1, "secret-regex"),
            _f("config/app.env", "aws-access-key-id", None, "secret-regex"),
        ],
    )
    assert "PRIVATE KEY" not in out["deploy/key.pem"]
    assert "MIIB" not in out["deploy/key.pem"]
    assert out["config/app.env"] == "LOG=1\nAWS_ACCESS_KEY_ID=\n"


SOCKET_FOLDERS = """services:
  agent:
    image: agent:1.4.2
    volumes:
      - /:/host:ro
      - //var/./run/:/var/run
      - type: bind
        source: /run/containerd
        target: /run/containerd
      - /srv/agent/data:/data
      - cache:/cache
"""


@pytest.mark.parametrize("path", ["compose.yaml", "deploy/stack.yml", "infra/app/prod.YAML"])
def test_socket_folders_are_unmounted_in_any_compose_shaped_file(path: str) -> None:
    """What the gate calls socket exposure (a socket's folder, the host root) is what goes,
    whatever the compose file is called; other mounts stay."""
    finding = _f(path, "compose-docker-socket", 5)
    out = correct({path: SOCKET_FOLDERS}, [finding])[path]
    volumes = yaml.safe_load(out)["services"]["agent"]["volumes"]
    assert volumes == ["/srv/agent/data:/data", "cache:/cache"]


def test_a_yaml_that_is_not_compose_is_not_rewritten_as_compose() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n  containers: []\n"
    finding = _f("k8s/pod.yaml", "compose-docker-socket", 1)
    assert correct({"k8s/pod.yaml": text}, [finding]) == {"k8s/pod.yaml": text}
