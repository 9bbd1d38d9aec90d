"""Pull requests through the gates.

The one PR pipeline (every kind: ``infra``, ``dev``, ``adr``):

- :mod:`backend.infra.prs` — the ``PullRequest`` record and its repository;
- :mod:`backend.infra.kinds` — what differs per kind (branch, author, events...);
  :mod:`backend.infra.kind_adr` — the ADR kind;
- :mod:`backend.infra.flow` — proposals, gates and corrections through the state machine;
- :mod:`backend.infra.actions` — the operator's actions and the reads of the HTTP API;
- :mod:`backend.infra.pipeline` / :mod:`backend.infra.dev_tasks` — the Infra agent's and
  the dev agents' entry points;
- :mod:`backend.infra.git` — a git provider over the real ``git`` CLI.

The rule-based planner is :mod:`backend.planner`, handed to the flow (never imported by
the kinds). Importing this package starts nothing and runs no subprocess.
"""
