"""Least-privilege posture checks: IAM policies, Terraform deployment, database grants.

Modules:
    iam_model       the normalized policy/statement/finding types
    iam_tools       the per-tool expected-actions table (what each tool really uses)
    iam_rules       the project's own invariants over one statement or one role
    iam_parliament  adapter over parliament's general IAM linting
    iam_sources     reading policy JSON files (comments tolerated)
    terraform       extracting policies and role attachments from ``.tf`` files
    iam             ``audit_iam(paths)``: the whole audit, used by ``cadencia audit iam``
"""
