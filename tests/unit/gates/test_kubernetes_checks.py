"""The Kubernetes check: pod templates of plain manifests, kustomizations, templates noted."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.gates.findings import ScanResult
from backend.gates.scanners import kubernetes
from backend.gates.scanners._base import ScanContext
from backend.gates.scanners.kubernetes import check_manifest


def rules(text: str) -> list[tuple[str, int | None]]:
    return sorted((f.rule, f.line) for f in check_manifest(text))


def pod(spec: str, kind: str = "Deployment") -> str:
    """A workload whose pod spec is ``spec`` (indented by the caller for its place)."""
    if kind == "Pod":
        return f"apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n{_indent(spec, 2)}"
    if kind == "CronJob":
        head = "spec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n"
        return f"apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: c\n{head}" + _indent(
            spec, 10
        )
    head = "spec:\n  template:\n    spec:\n"
    return f"apiVersion: apps/v1\nkind: {kind}\nmetadata:\n  name: d\n{head}" + _indent(spec, 6)


def _indent(text: str, n: int) -> str:
    return "".join(" " * n + line + "\n" for line in text.splitlines())


@pytest.mark.parametrize("kind", ["Pod", "Deployment", "DaemonSet", "StatefulSet", "CronJob"])
def test_every_workload_kind_is_checked(kind: str) -> None:
    text = pod("containers:\n- name: a\n  image: nginx:latest", kind)
    assert [r for r, _ in rules(text)] == ["k8s-image-latest"]


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/var",
        "/var/run",
        "/var/run/",
        "/run",
        "//run/./containerd/",
        "/var/run/docker.sock",
        "/run/containerd/containerd.sock",
        "/var/run/crio/crio.sock",
        "/var/run/crio",
        "/run/podman",
        "/var/lib/../run",
    ],
)
def test_host_path_of_a_socket_or_a_folder_above_one(path: str) -> None:
    spec = (
        "containers:\n- name: a\n  image: a:1\n"
        f"volumes:\n- name: v\n  hostPath:\n    path: '{path}'\n"
    )
    assert [r for r, _ in rules(pod(spec))] == ["k8s-docker-socket"]


def test_the_other_checks() -> None:
    spec = """\
hostNetwork: true
hostPID: true
hostIPC: false
initContainers:
- name: init
  image: busybox
containers:
- name: a
  image: ghcr.io/x/a@sha256:0000000000000000000000000000000000000000000000000000000000000000
  securityContext:
    privileged: true
    capabilities:
      add: [CAP_SYS_ADMIN, NET_BIND_SERVICE]
volumes:
- name: logs
  hostPath: {path: /var/log}
- name: etc
  hostPath: {path: /etc}
"""
    assert rules(pod(spec)) == [
        ("k8s-dangerous-capability", 20),
        ("k8s-host-namespace", 9),
        ("k8s-host-network", 8),
        ("k8s-host-path-mount", 25),
        ("k8s-image-untagged", 13),
        ("k8s-privileged", 18),
    ]


def test_lists_and_multi_document_files() -> None:
    deployment = pod("containers:\n- name: a\n  image: redis")
    listed = "apiVersion: v1\nkind: List\nitems:\n- " + deployment.replace("\n", "\n  ")
    text = "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\n" + listed
    assert [r for r, _ in rules(text)] == ["k8s-image-untagged"]


def test_a_kustomization_retags_its_resources_only(tmp_path: Path) -> None:
    files = {
        "base/kustomization.yaml": "resources: [deployment.yaml]\n",
        "base/deployment.yaml": pod("containers:\n- name: a\n  image: nginx"),
        "overlays/prod/kustomization.yaml": (
            "resources: [../../base]\nimages:\n- name: nginx\n  newTag: 1.27.0\n"
        ),
        "other/deployment.yaml": pod("containers:\n- name: a\n  image: nginx"),
        "dev/kustomization.yml": "resources: [../base]\nimages:\n- name: redis\n  newTag: latest\n",
    }
    found = scan(tmp_path, files)
    assert sorted((f.rule, f.file) for f in found.findings) == [
        ("k8s-image-latest", "dev/kustomization.yml"),
        ("k8s-image-untagged", "other/deployment.yaml"),
    ]


def test_helm_charts_and_go_templates_are_noted_not_parsed(tmp_path: Path) -> None:
    files = {
        "charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
        "charts/app/values.yaml": "image:\n  repository: nginx\n  tag: ''\n",
        "charts/app/templates/deployment.yaml": (
            "{{- if .Values.enabled }}\napiVersion: apps/v1\nkind: Deployment\n"
            "metadata:\n  name: {{ .Release.Name }}\n{{- end }}\n"
        ),
        "charts/app/templates/policy.yaml": '{"Statement": [{{ .Values.statement }}]}\n',
        "gomplate/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Env.N }}\n",
    }
    result = scan(tmp_path, files)
    assert result.status == "pass"
    assert [(f.rule, f.file, f.severity) for f in result.findings] == [
        ("k8s-helm-chart-not-rendered", "charts/app/Chart.yaml", "info"),
        ("k8s-go-template-not-checked", "gomplate/pod.yaml", "info"),
    ]
    assert "2 template file(s)" in result.findings[0].message
    assert result.detail == "3 template file(s) not rendered, not checked"


def test_a_broken_manifest_fails_and_nothing_else_is_read(tmp_path: Path) -> None:
    files = {
        "k8s/bad.yaml": "apiVersion: v1\nkind: Pod\nspec: [unclosed\n",
        "notes.yaml": "title: not kubernetes\n",
    }
    result = scan(tmp_path, files)
    assert [(f.rule, f.file, f.severity) for f in result.findings] == [
        ("k8s-invalid-yaml", "k8s/bad.yaml", "error")
    ]


def test_nothing_to_check_is_no_result(tmp_path: Path) -> None:
    (tmp_path / "notes.yaml").write_text("title: not kubernetes\n")
    assert kubernetes.scan(ScanContext(root=tmp_path, files=("notes.yaml",))) is None


def scan(root: Path, files: dict[str, str]) -> ScanResult:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    result = kubernetes.scan(ScanContext(root=root, files=tuple(sorted(files))))
    assert result is not None
    return result
