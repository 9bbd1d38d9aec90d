"""Which files each scanner looks at, decided by name and, for Dockerfiles, compose, IAM and
Kubernetes, by content.

Compose files, Kubernetes manifests and Go (Helm) templates are told apart from a bounded
head of each YAML file with text patterns only: the parent process never parses the PR's
YAML (that happens in :mod:`backend.gates.sandbox`), and the gate may see thousands of files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

_DOCKER_WORD = r"(?:dockerfile|containerfile)"
_DOCKERFILE = re.compile(rf"^{_DOCKER_WORD}(?:[-_.].+)?$|^.+[-_.]{_DOCKER_WORD}$", re.IGNORECASE)
_NOT_DOCKERFILE = re.compile(
    r"\.(?:dockerignore|md|rst|adoc|html?|json|ya?ml|toml|py|sh|go|js|ts|rb|lock|patch|diff|vim|el)$",
    re.IGNORECASE,
)
"""Names like ``Dockerfile.dockerignore`` or ``dockerfile.py``: a Dockerfile's companion
or code about Dockerfiles, not one (a real Dockerfile so named is still found by content)."""
_DIRECTIVE = re.compile(r"^#\s*(?:syntax|escape|check)\s*=", re.IGNORECASE)
_FROM_LINE = re.compile(
    r"^from\s+(?:--platform=\S+\s+)?[\w${}.:/@-]+(?:\s+as\s+[\w.-]+)?\s*$", re.IGNORECASE
)
_ARG_LINE = re.compile(r"^arg\s+\w+", re.IGNORECASE)
_SNIFF_BYTES = 8192
_COMPOSE = re.compile(r"^(docker-)?compose(\.[\w.-]+)?\.ya?ml$")
_YAML = re.compile(r"\.ya?ml$", re.IGNORECASE)
_TOP_KEY = re.compile(r"""^(?:"([^"]*)"|'([^']*)'|([A-Za-z_$][\w.$-]*))[ \t]*:(?:[ \t]|$)""", re.M)
_SERVICE_KEY = re.compile(
    r"^[ \t]+(?:-[ \t]+)?(?:image|build)[ \t]*:|[{,][ \t]*(?:image|build)[ \t]*:", re.M
)
_NOT_COMPOSE = re.compile(
    r"""^["']?(?:apiVersion|kind|on|jobs|runs|openapi|swagger)["']?[ \t]*:(?:[ \t]|$)""", re.M
)
"""Top-level keys of what is not compose: Kubernetes objects, GitHub workflows and actions,
OpenAPI documents (which may have a ``services`` key of their own)."""
_GO_ACTION = re.compile(
    r"^[ \t]*(?:-[ \t]+)?\{\{|:[ \t]+\{\{|^[ \t]*[^\s#\"'][^#\"'\n]*\{\{-", re.M
)
"""A Go template action where YAML structure is: at the start of a line or as an unquoted
value (``{{- if .Values.x }}``, ``name: {{ .Release.Name }}``). A quoted ``"{{.Name}}"``
(compose's log tag, a Traefik label) is a plain string, not a template."""
_KUSTOMIZATION = frozenset({"kustomization.yaml", "kustomization.yml", "kustomization"})


def is_dockerfile(rel: str) -> bool:
    """By name, in any case: ``Dockerfile``, ``dockerfile``, ``Dockerfile-prod``,
    ``Dockerfile.dev``, ``app_Dockerfile``, ``x.dockerfile``, ``Containerfile``..."""
    name = PurePosixPath(rel).name
    return bool(_DOCKERFILE.match(name)) and not _NOT_DOCKERFILE.search(name)


def looks_like_dockerfile(text: str) -> bool:
    """By content: parser directives and comments, optional ``ARG`` lines, then ``FROM``.

    The whole ``FROM`` line must be an image reference (``AS name`` at most), so
    Python's ``from x import y`` is not taken for one.
    """
    # a FROM split over lines ("FROM \\" then the image) is still one instruction
    for raw in re.sub(r"[\\`][ \t]*\r?\n", " ", text).splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            if _DIRECTIVE.match(line) and "docker" in line.lower():
                return True  # "# syntax=docker/dockerfile:1" says it outright
            continue
        if _FROM_LINE.match(line):
            return True
        if not _ARG_LINE.match(line):
            return False
    return False


def dockerfile_targets(root: Path, files: Iterable[str]) -> list[str]:
    """The Dockerfiles of a copy, by name or by content (whatever the file is called)."""
    found = []
    for rel in files:
        if is_dockerfile(rel):
            found.append(rel)
            continue
        head = read_head(root / rel, _SNIFF_BYTES)
        if head is not None and looks_like_dockerfile(head):
            found.append(rel)
    return found


def is_compose(rel: str) -> bool:
    """By name: ``compose.yaml``, ``docker-compose.yml``, ``docker-compose.prod.yml``..."""
    return bool(_COMPOSE.match(PurePosixPath(rel).name))


def _top_level(key: str) -> re.Pattern[str]:
    return re.compile(rf"""^["']?{key}["']?[ \t]*:(?:[ \t]|$)""", re.M)


_SERVICES = _top_level("services")
_API_VERSION = _top_level("apiVersion")
_KIND = _top_level("kind")


def looks_like_compose(text: str) -> bool:
    """By content: a top-level ``services`` whose entries have an ``image`` or a ``build``,
    and no key of a Kubernetes object, a workflow or an OpenAPI document; not a template."""
    start = _SERVICES.search(text)
    if start is None or _NOT_COMPOSE.search(text) or has_go_template(text):
        return False
    block = text[start.end() :]
    following = _TOP_KEY.search(block)
    return bool(_SERVICE_KEY.search(block[: following.start()] if following else block))


def has_go_template(text: str) -> bool:
    """True when the text has Go template actions where YAML structure is (Helm, gomplate)."""
    return "{{" in text and bool(_GO_ACTION.search(text))


def is_kustomization(rel: str) -> bool:
    """A Kustomize file: ``kustomization.yaml``, ``kustomization.yml`` or ``Kustomization``."""
    return PurePosixPath(rel).name.lower() in _KUSTOMIZATION


def helm_chart_of(rel: str, files: Collection[str]) -> str | None:
    """The chart folder (``Chart.yaml`` beside its ``templates/``) a file is a template of.

    Args:
        rel: the file.
        files: every file of the copy (a set: it is asked once per YAML file).
    """
    path = PurePosixPath(rel)
    for parent in path.parents:
        if parent.name == "templates" and _is_chart(parent.parent, files):
            return str(parent.parent)
    return None


def _is_chart(folder: PurePosixPath, files: Collection[str]) -> bool:
    return any(str(folder / name).removeprefix("./") in files for name in _CHARTS)


_CHARTS = ("Chart.yaml", "Chart.yml")


def read_head(path: Path, limit: int = _SNIFF_BYTES * 8) -> str | None:
    """The first ``limit`` bytes of a file as text; ``None`` when it cannot be read."""
    try:
        with path.open("rb") as handle:
            return handle.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return None


def compose_targets(root: Path, files: Iterable[str]) -> list[str]:
    """The compose files of a copy: by name, or any YAML shaped like compose whatever its
    name or folder (``stack.yml``, ``deploy/prod.yaml``); never a chart's values or template,
    nor a file with Go template actions (the Kubernetes check notes those)."""
    listed = list(files)
    present = set(listed)
    found = []
    for rel in listed:
        if not _YAML.search(rel) or helm_chart_of(rel, present) is not None:
            continue  # a chart's template is not YAML until rendered, whatever its name
        if is_compose(rel):
            head = read_head(root / rel)
            if head is None or not has_go_template(head):
                found.append(rel)
            continue
        path = PurePosixPath(rel)
        if path.name.lower().startswith("values") and _is_chart(path.parent, present):
            continue  # a chart's values.yaml may have a "services" of its own
        head = read_head(root / rel)
        if head is not None and looks_like_compose(head):
            found.append(rel)
    return found


def is_template(root: Path, rel: str) -> bool:
    """True for a Helm chart's template or a YAML file with Go template actions: not YAML
    until rendered, so a YAML parser's error about it is no finding. The chart is looked up
    in the copy itself (``Chart.yaml`` beside ``templates/``), in constant time per file."""
    for parent in PurePosixPath(rel).parents:
        if parent.name == "templates" and any(
            (root / parent.parent / c).is_file() for c in _CHARTS
        ):
            return True
    head = read_head(root / rel) if _YAML.search(rel) else None
    return head is not None and has_go_template(head)


def looks_like_manifest(text: str) -> bool:
    """By content: a Kubernetes object (top-level ``apiVersion`` and ``kind``), not a template."""
    return bool(_API_VERSION.search(text) and _KIND.search(text)) and not has_go_template(text)


@dataclass(frozen=True)
class KubernetesTargets:
    """What the Kubernetes check looks at.

    Attributes:
        manifests: plain manifests and kustomizations, parsed and checked.
        charts: each Helm chart folder with its templates (noted as not rendered).
        templates: other YAML files with Go template actions (noted, not parsed).
    """

    manifests: list[str]
    charts: dict[str, list[str]]
    templates: list[str]

    def __bool__(self) -> bool:
        return bool(self.manifests or self.charts or self.templates)


def kubernetes_targets(root: Path, files: Iterable[str]) -> KubernetesTargets:
    """The copy's Kubernetes manifests and kustomizations (by content, any name) and its
    templates: a Helm chart's ``templates/`` and any YAML with Go template actions."""
    listed = list(files)
    present = set(listed)
    found = KubernetesTargets([], {}, [])
    for rel in listed:
        kustomization = is_kustomization(rel)
        if not kustomization and not _YAML.search(rel):
            continue
        chart = helm_chart_of(rel, present)
        if chart is not None:
            found.charts.setdefault(chart, []).append(rel)
            continue
        head = read_head(root / rel)
        if head is None:
            continue
        if has_go_template(head):
            found.templates.append(rel)
        elif kustomization or looks_like_manifest(head):
            found.manifests.append(rel)
    return found


def is_terraform(rel: str) -> bool:
    """Terraform configuration (``*.tf``); ``terraform fmt`` also covers ``*.tfvars``."""
    return rel.endswith((".tf", ".tfvars"))


def is_iam_policy(root: Path, rel: str) -> bool:
    """A JSON file whose top level has a ``Statement``: an IAM policy document."""
    if not rel.endswith(".json"):
        return False
    try:
        data = json.loads((root / rel).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(data, dict) and "Statement" in data
