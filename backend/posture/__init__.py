"""Least-privilege posture checks: IAM policies, Terraform deployment, database grants.

``iam`` is the whole IAM audit (``cadencia audit iam``) over the ``iam_*`` and
``terraform*`` modules (policy model, per-tool expected actions, own invariants,
parliament, readers of JSON files and Terraform); ``grants_audit`` diffs the live
PostgreSQL privileges against the grants spec; ``teardown`` stops, revokes and drops the
roles and the ledger, then verifies.
"""
