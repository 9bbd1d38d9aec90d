"""Pull requests through the gates, and the Infra agent's offline machinery.

The one PR pipeline (every kind: ``infra``, ``dev``, ``adr``):

- :mod:`backend.infra.prs` — the ``PullRequest`` record and its repository;
- :mod:`backend.infra.kinds` — what differs per kind (branch, author, events...);
  :mod:`backend.infra.kind_adr` — the ADR kind;
- :mod:`backend.infra.flow` — proposals, gates and corrections through the state machine;
- :mod:`backend.infra.actions` — the operator's actions and the reads of the HTTP API;
- :mod:`backend.infra.pipeline` / :mod:`backend.infra.dev_tasks` — the Infra agent's and
  the dev agents' entry points.

The Infra agent's offline "model":

- :mod:`backend.infra.detect` — manifest heuristics (language, entry point, port, kind);
- :mod:`backend.infra.planner` — ``plan()`` proposes Dockerfiles, compose, CI; ``correct()``
  fixes what gate findings name;
- :mod:`backend.infra.git` — a git provider over the real ``git`` CLI.

The module map itself is :mod:`backend.module_map` (the Arquiteto writes it, the planner
reads it). Importing this package starts nothing and runs no subprocess.
"""
