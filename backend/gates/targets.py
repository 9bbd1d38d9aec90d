"""Which files each scanner looks at, decided by name (and, for IAM, by content)."""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath

_DOCKERFILE = re.compile(r"^(Dockerfile|Containerfile)(\..+)?$|.+\.(Dockerfile|dockerfile)$")
_COMPOSE = re.compile(r"^(docker-)?compose(\.[\w.-]+)?\.ya?ml$")


def is_dockerfile(rel: str) -> bool:
    """``Dockerfile``, ``Dockerfile.*``, ``*.Dockerfile``, ``Containerfile``."""
    return bool(_DOCKERFILE.match(PurePosixPath(rel).name))


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
