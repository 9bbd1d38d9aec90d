"""The rule-based infra planner: a repository's files in, proposed files out.

:func:`plan` reads a repository (and its module map, or one detected from its manifests)
and proposes a Dockerfile per deployable module, ``compose.yaml`` and a CI workflow;
:func:`correct` fixes, in proposed files, what gate findings name. It is the Infra agent's
offline "model" and the rule-based fixer of PR corrections. It knows no database, git or
PR: whoever needs it is handed these functions. Importing it runs nothing.
"""

from __future__ import annotations

from backend.planner.detect import detect_modules
from backend.planner.fixer import correct
from backend.planner.plans import (
    COMPOSE_PATH,
    WORKFLOW_PATH,
    Plan,
    module_file,
    plan,
    propose,
    resolve_module_map,
)

__all__ = [
    "COMPOSE_PATH",
    "WORKFLOW_PATH",
    "Plan",
    "correct",
    "detect_modules",
    "module_file",
    "plan",
    "propose",
    "resolve_module_map",
]
