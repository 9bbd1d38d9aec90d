"""The Infra agent's offline machinery: module map, rule-based planner, git provider.

- :mod:`backend.infra.modules` — the module map (pydantic) and loading/detection;
- :mod:`backend.infra.detect` — manifest heuristics (language, entry point, port, kind);
- :mod:`backend.infra.planner` — ``plan()`` proposes Dockerfiles, compose, CI; ``correct()``
  fixes what gate findings name;
- :mod:`backend.infra.git` — a git provider over the real ``git`` CLI.

Importing this package starts nothing and runs no subprocess.
"""
