"""Which files the scanners look at: Dockerfiles and compose files by name or content,
Kubernetes manifests by content, Helm charts and Go templates recognised."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.gates.targets import (
    compose_targets,
    dockerfile_targets,
    has_go_template,
    helm_chart_of,
    is_dockerfile,
    is_kustomization,
    is_template,
    kubernetes_targets,
    looks_like_compose,
    looks_like_dockerfile,
)


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


COMPOSE = "services:\n  web:\n    image: nginx:1.27\n"


def write(root: Path, files: dict[str, str]) -> list[str]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return sorted(files)


@pytest.mark.parametrize(
    "name",
    [
        "stack.yml",
        "deploy/prod.yaml",
        "infra/app/docker-stack.yml",
        "Deploy/Prod.YML",
        "ops/-odd name.YAML",
    ],
)
def test_compose_files_are_found_by_content_whatever_their_name(tmp_path: Path, name: str) -> None:
    files = write(tmp_path, {name: COMPOSE, "README.md": "services:\n  web:\n    image: x\n"})
    assert compose_targets(tmp_path, files) == [name]


@pytest.mark.parametrize(
    "text",
    [
        "version: '3.8'\nservices:\n  api:\n    build: ./api\n",
        "services: {web: {image: nginx}}\n",
        "x-common: &c\n  restart: always\nservices:\n  db:\n    <<: *c\n    image: postgres:16\n",
        '"services":\n  web:\n    image: nginx\n',
    ],
)
def test_compose_shapes(text: str) -> None:
    assert looks_like_compose(text)


@pytest.mark.parametrize(
    "text",
    [
        # a Kubernetes object, a GitHub workflow, an OpenAPI document with "services"
        "apiVersion: v1\nkind: Service\nservices:\n  web:\n    image: x\n",
        "on: [push]\njobs:\n  t:\n    services:\n      pg:\n        image: postgres\n",
        "openapi: 3.0.3\nservices:\n  web:\n    image: x\n",
        # services without image or build; image under another key
        "services:\n  web:\n    environment: {A: '1'}\nother:\n  image: y\n",
        "services:\n  - name: web\n",
        # a Go template
        "services:\n  {{ .Values.name }}:\n    image: {{ .Values.image }}\n",
        "",
    ],
)
def test_what_only_looks_like_compose(text: str) -> None:
    assert not looks_like_compose(text)


def test_compose_targets_skip_charts_and_templates(tmp_path: Path) -> None:
    files = write(
        tmp_path,
        {
            "chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 0.1.0\n",
            "chart/values.yaml": COMPOSE,
            "chart/templates/compose.yaml": COMPOSE,
            "gomplate/docker-compose.yml": "services:\n  web:\n    image: {{ .Env.IMAGE }}\n",
            "compose.yaml": "include: [stack.yml]\n",
            "stack.yml": COMPOSE,
        },
    )
    assert compose_targets(tmp_path, files) == ["compose.yaml", "stack.yml"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{- if .Values.enabled }}\nkind: Pod\n{{- end }}\n", True),
        ("metadata:\n  name: {{ .Release.Name }}\n", True),
        ("      containers:\n        - {{ toYaml .Values.c }}\n", True),
        ('logging:\n  options:\n    tag: "{{.ImageName}}/{{.Name}}"\n', False),
        ("labels:\n  - 'traefik.rule={{ .Name }}'\n", False),
        ("# {{ not an action in a comment }}\nkind: Pod\n", False),
    ],
)
def test_go_template_actions_where_yaml_structure_is(text: str, expected: bool) -> None:
    assert has_go_template(text) is expected


def test_kubernetes_targets_split_manifests_charts_and_templates(tmp_path: Path) -> None:
    files = write(
        tmp_path,
        {
            "k8s/web.yml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\n",
            "k8s/kustomization.yaml": "resources: [web.yml]\n",
            "overlay/Kustomization": "resources: [../k8s]\n",
            "charts/app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
            "charts/app/templates/deploy.yaml": "kind: Deployment\nname: {{ .Release.Name }}\n",
            "charts/app/templates/static.yaml": "apiVersion: v1\nkind: ConfigMap\n",
            "charts/app/values.yaml": "image: {tag: ''}\n",
            "tmpl/app.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Env.NAME }}\n",
            "compose.yaml": COMPOSE,
            ".github/workflows/ci.yml": "on: [push]\njobs: {}\n",
        },
    )
    found = kubernetes_targets(tmp_path, files)
    assert found.manifests == ["k8s/kustomization.yaml", "k8s/web.yml", "overlay/Kustomization"]
    assert found.charts == {
        "charts/app": ["charts/app/templates/deploy.yaml", "charts/app/templates/static.yaml"]
    }
    assert found.templates == ["tmpl/app.yaml"]
    assert is_template(tmp_path, "charts/app/templates/static.yaml")
    assert is_template(tmp_path, "tmpl/app.yaml")
    assert not is_template(tmp_path, "k8s/web.yml")
    assert helm_chart_of("charts/app/values.yaml", set(files)) is None
    assert is_kustomization("overlay/Kustomization")
    assert not is_kustomization("k8s/web.yml")
