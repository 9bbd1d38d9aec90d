"""Which files each scanner looks at, decided by name and, for Dockerfiles and IAM, content."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
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
        try:
            with (root / rel).open("rb") as handle:
                head = handle.read(_SNIFF_BYTES)
        except OSError:
            continue
        if looks_like_dockerfile(head.decode("utf-8", errors="replace")):
            found.append(rel)
    return found


def is_compose(rel: str) -> bool:
    """``compose.yaml``, ``docker-compose.yml``, ``docker-compose.prod.yml``..."""
    return bool(_COMPOSE.match(PurePosixPath(rel).name))


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
