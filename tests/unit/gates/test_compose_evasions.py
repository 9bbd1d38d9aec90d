"""Compose evasions: what compose would run is judged, not the text as written."""

from __future__ import annotations

import pytest

from backend.gates.findings import Finding
from backend.gates.scanners.compose import check_compose
from backend.gates.scanners.compose_model import interpolate, parse_dotenv


def rules(findings: list[Finding]) -> list[tuple[str, str, int | None]]:
    return sorted((f.rule, f.file, f.line) for f in findings)


def check(files: dict[str, str], file: str = "compose.yaml") -> list[tuple[str, str, int | None]]:
    return rules(check_compose(files[file], file, files.get))


@pytest.mark.parametrize(
    ("text", "env", "expanded"),
    [
        ("${PORT:-0.0.0.0:5432}:5432", {}, "0.0.0.0:5432:5432"),
        ("${BIND-0.0.0.0}:80:80", {}, "0.0.0.0:80:80"),
        ("${BIND-0.0.0.0}:80:80", {"BIND": ""}, ":80:80"),
        ("${BIND:-0.0.0.0}:80:80", {"BIND": ""}, "0.0.0.0:80:80"),
        ("${BIND:-0.0.0.0}:80:80", {"BIND": "127.0.0.1"}, "127.0.0.1:80:80"),
        ("${A:-${B:-0.0.0.0}}:1:1", {}, "0.0.0.0:1:1"),
        ("$HOST:1:1", {"HOST": "0.0.0.0"}, "0.0.0.0:1:1"),
        ("${IP}:1:1", {}, "${IP}:1:1"),
        ("${IP:?set IP}:1:1", {}, "${IP}:1:1"),
        ("${X:+0.0.0.0}:1:1", {}, "0.0.0.0:1:1"),
        ("$$HOME", {}, "$HOME"),
    ],
)
def test_interpolation(text: str, env: dict[str, str], expanded: str) -> None:
    assert interpolate(text, env) == expanded


def test_dotenv() -> None:
    assert parse_dotenv('# c\nexport A=1\nB="two words"\nC=x # note\nbad\n') == {
        "A": "1",
        "B": "two words",
        "C": "x",
    }


def test_default_valued_variables_are_resolved() -> None:
    text = """\
services:
  db:
    image: postgres:16.4
    privileged: ${PRIV:-true}
    ports:
      - "${PORT:-0.0.0.0:5432}:5432"
      - ${BIND-0.0.0.0}:6432:6432
      - target: 80
        host_ip: ${IP:-0.0.0.0}
    network_mode: ${NET:-host}
    volumes:
      - ${SOCK:-/var/run/docker.sock}:/s
"""
    assert check({"compose.yaml": text}) == [
        ("compose-docker-socket", "compose.yaml", 12),
        ("compose-host-network", "compose.yaml", 10),
        ("compose-port-all-interfaces", "compose.yaml", 6),
        ("compose-port-all-interfaces", "compose.yaml", 7),
        ("compose-port-all-interfaces", "compose.yaml", 8),
        ("compose-privileged", "compose.yaml", 4),
    ]


def test_dotenv_of_the_project_sets_variables() -> None:
    text = 'services:\n  db:\n    ports: ["${BIND}:5432:5432", "${SAFE:-0.0.0.0}:1:1"]\n'
    files = {"compose.yaml": text, ".env": "BIND=0.0.0.0\nSAFE=127.0.0.1\n"}
    assert check(files) == [("compose-port-all-interfaces", "compose.yaml", 3)]


def test_extends_from_another_file_inherits_its_settings() -> None:
    files = {
        "compose.yaml": (
            "services:\n"
            "  api:\n"
            "    image: api:1\n"
            "    extends:\n"
            "      file: base/common.yml\n"
            "      service: base\n"
            "  worker:\n"
            "    extends: local\n"
            "  local:\n"
            "    image: w:1\n"
            "    cap_add: [SYS_ADMIN]\n"
        ),
        "base/common.yml": (
            "services:\n  base:\n    extends: {file: root.yml, service: r}\n    privileged: true\n"
        ),
        "base/root.yml": "services:\n  r:\n    volumes: ['/:/host:ro']\n",
    }
    assert check(files) == [
        ("compose-dangerous-capability", "compose.yaml", 11),
        ("compose-docker-socket", "base/root.yml", 3),
        ("compose-privileged", "base/common.yml", 4),
    ]


def test_include_is_followed() -> None:
    files = {
        "compose.yaml": "include:\n  - infra/db.yml\n  - path: [infra/cache.yml]\nservices: {}\n",
        "infra/db.yml": "services:\n  db:\n    ports: ['5432:5432']\n",
        "infra/cache.yml": "services:\n  c:\n    network_mode: host\n",
    }
    assert check(files) == [
        ("compose-host-network", "infra/cache.yml", 3),
        ("compose-port-all-interfaces", "infra/db.yml", 3),
    ]


def test_references_leaving_the_pr_are_findings() -> None:
    files = {
        "deploy/compose.yaml": (
            "include:\n"
            "  - ../../elsewhere/compose.yml\n"
            "  - oci://registry/stack:1\n"
            "  - missing.yml\n"
            "services:\n"
            "  a:\n"
            "    extends: {file: /etc/compose/base.yml, service: b}\n"
            "  b:\n"
            "    extends: nowhere\n"
            "  c:\n"
            "    extends: c\n"
        ),
    }
    assert check(files, "deploy/compose.yaml") == [
        ("compose-extends-cycle", "deploy/compose.yaml", 11),
        ("compose-extends-outside-pr", "deploy/compose.yaml", 7),
        ("compose-extends-unresolved", "deploy/compose.yaml", 9),
        ("compose-include-outside-pr", "deploy/compose.yaml", 2),
        ("compose-include-outside-pr", "deploy/compose.yaml", 3),
        ("compose-include-outside-pr", "deploy/compose.yaml", 4),
    ]


def test_include_cycle_terminates() -> None:
    files = {"compose.yaml": "include: [b.yml]\n", "b.yml": "include: [compose.yaml]\n"}
    assert check(files) == [("compose-include-cycle", "b.yml", 1)]


def test_capability_spellings() -> None:
    text = """\
services:
  a:
    cap_add:
      - CAP_SYS_ADMIN
      - sys_ptrace
      - all
      - " Cap_Net_Admin "
      - CHOWN
      - NET_BIND_SERVICE
  b:
    cap_add: SYS_MODULE
"""
    assert check({"compose.yaml": text}) == [
        ("compose-dangerous-capability", "compose.yaml", n) for n in (4, 5, 6, 7, 11)
    ]


@pytest.mark.parametrize("spelled", ["true", "True", "TRUE", '"true"', "yes", "on", "'on'"])
def test_privileged_spellings(spelled: str) -> None:
    text = f"services:\n  a:\n    privileged: {spelled}\n"
    assert check({"compose.yaml": text}) == [("compose-privileged", "compose.yaml", 3)]


def test_host_mounts_short_and_long_syntax() -> None:
    text = """\
services:
  a:
    volumes:
      - /:/host:ro
      - /var/run:/var/run:ro
      - //var//run/./docker.sock:/d.sock:ro
      - /run/:/r
      - type: bind
        source: /
        target: /host
        read_only: true
      - type: bind
        source: /var/run/docker.sock
        target: /var/run/docker.sock
        read_only: true
      - /etc/localtime:/etc/localtime:ro
      - ./data:/data
      - /srv/app:/app
      - /var/run
    pid: host
    security_opt: ["seccomp=unconfined", "no-new-privileges:true"]
"""
    assert check({"compose.yaml": text}) == [
        ("compose-docker-socket", "compose.yaml", n) for n in (4, 5, 6, 7, 8, 12)
    ] + [
        ("compose-host-namespace", "compose.yaml", 20),
        ("compose-unconfined-security-opt", "compose.yaml", 21),
    ]


def test_named_volume_binding_a_host_path_and_relative_escapes() -> None:
    files = {
        "deploy/compose.yaml": """\
services:
  a:
    volumes:
      - hostroot:/host
      - type: volume
        source: sock
        target: /s
      - data:/data
      - ../../..:/up
      - ../src:/src
volumes:
  hostroot:
    driver: local
    driver_opts: {type: none, o: bind, device: /}
  sock:
    driver_opts: {type: none, o: "bind,ro", device: /var/run/docker.sock}
  data: {}
""",
    }
    assert check(files, "deploy/compose.yaml") == [
        ("compose-docker-socket", "deploy/compose.yaml", 4),
        ("compose-docker-socket", "deploy/compose.yaml", 5),
        ("compose-host-path-mount", "deploy/compose.yaml", 9),
    ]


@pytest.mark.parametrize(
    ("image", "env", "rule"),
    [
        ("nginx", {}, "compose-image-untagged"),
        ("registry.example.com:5000/team/app", {}, "compose-image-untagged"),
        ("${REGISTRY:-ghcr.io}/acme/api", {}, "compose-image-untagged"),
        ("${IMAGE:-linuxserver/plex}", {}, "compose-image-untagged"),
        ("nginx:latest", {}, "compose-image-latest"),
        ("registry:5000/app:latest", {}, "compose-image-latest"),
        ("ghcr.io/acme/api:${TAG:-latest}", {}, "compose-image-latest"),
        ("ghcr.io/acme/api:${TAG}", {"TAG": "latest"}, "compose-image-latest"),
        ("nginx:1.27-alpine", {}, None),
        ("registry:5000/app:2.1", {}, None),
        ("nginx@sha256:" + "a" * 64, {}, None),
        ("nginx:1.27@sha256:" + "b" * 64, {}, None),
        ("ghcr.io/acme/api:${TAG:?set TAG}", {}, None),
        ("ghcr.io/acme/api:${TAG}", {}, None),
        ("${IMAGE}", {}, None),
        ("ghcr.io/acme/api:${TAG:-latest}", {"TAG": "1.4.2"}, None),
    ],
)
def test_image_tags(image: str, env: dict[str, str], rule: str | None) -> None:
    files = {
        "compose.yaml": f'services:\n  api:\n    image: "{image}"\n',
        ".env": "".join(f"{k}={v}\n" for k, v in env.items()),
    }
    assert check(files) == ([(rule, "compose.yaml", 3)] if rule else [])


def test_an_image_built_here_may_be_untagged() -> None:
    text = "services:\n  app:\n    build: .\n    image: example/app\n"
    assert check({"compose.yaml": text}) == []


@pytest.mark.parametrize(
    "source",
    [
        "/",
        "/var",
        "/var/",
        "/var/run",
        "/var/run/",
        "//var//run",
        "/var/./run",
        "/var/lib/../run",
        "/var/run/docker/..",
        "/run",
        "/run/containerd",
        "/run/containerd/containerd.sock",
        "/var/run/crio",
        "/var/run/crio/crio.sock",
        "/run/podman",
        "/run/podman/podman.sock",
        "/run/user/1000",
        "/run/user/1000/docker.sock",
        "${SOCK_DIR:-/var/run}",
        "${ROOT-/}",
        "//./pipe/docker_engine",
    ],
)
def test_every_socket_folder_is_socket_exposure(source: str) -> None:
    short = f'services:\n  a:\n    image: x:1\n    volumes:\n      - "{source}:/host:ro"\n'
    long = (
        "services:\n  a:\n    image: x:1\n    volumes:\n"
        f'      - type: bind\n        source: "{source}"\n        target: /host\n'
    )
    assert check({"compose.yaml": short}) == [("compose-docker-socket", "compose.yaml", 5)]
    assert check({"compose.yaml": long}) == [("compose-docker-socket", "compose.yaml", 5)]


@pytest.mark.parametrize(
    "source", ["/var/log", "/var/lib/grafana", "/run/secrets/app", "/etc/localtime", "/srv/data"]
)
def test_host_folders_without_a_socket_are_not_socket_exposure(source: str) -> None:
    text = f"services:\n  a:\n    image: x:1\n    volumes: ['{source}:/data:ro']\n"
    assert check({"compose.yaml": text}) == []


def test_system_folders_stay_host_path_mounts() -> None:
    text = "services:\n  a:\n    image: x:1\n    volumes: ['/etc:/h/etc', '/proc:/h/proc']\n"
    assert check({"compose.yaml": text}) == [("compose-host-path-mount", "compose.yaml", 4)]


def test_the_windows_docker_pipe_is_the_socket() -> None:
    pipe = r"\\.\pipe\docker_engine"
    text = f"services:\n  a:\n    image: x:1\n    volumes:\n      - {pipe}:{pipe}\n"
    assert check({"compose.yaml": text}) == [("compose-docker-socket", "compose.yaml", 5)]
