"""Least-privilege posture checks: IAM policies, Terraform deployment, database grants.

Modules:
    iam_model       the normalized policy/statement/finding types
    iam_tools       the per-tool expected-actions table (what each tool really uses)
    iam_rules       the project's own invariants over one statement or one role
    iam_parliament  adapter over parliament's general IAM linting
    iam_sources     reading policy JSON files (comments tolerated)
    terraform       parsing a ``.tf`` directory and rendering its references
    terraform_iam   extracting policies and role attachments from a parsed directory
    iam             ``audit_iam(paths)``: the whole audit, used by ``cadencia audit iam``
    grants_audit    ``audit grants``: live PostgreSQL privileges diffed against the grants spec
    teardown        ``cadencia teardown``: stop, revoke and drop the roles, drop the ledger, verify
"""
