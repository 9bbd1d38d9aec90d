"""parliament's lookups take the index (``Action "*"`` was quadratic) and answer the same."""

from __future__ import annotations

import parliament
import parliament.policy

from backend.posture.iam_model import PolicySource
from backend.posture.iam_parliament import parliament_findings
from backend.posture.iam_speed import install


def test_indexed_lookups_answer_like_parliament() -> None:
    install()
    import parliament.statement as statement

    for action in ("s3:GetObject", "S3:getobject", "iam:PassRole", "ec2:RunInstances"):
        prefix, name = action.split(":")
        expected = [
            {"service": s["prefix"], "action": p["privilege"]}
            for s in parliament.iam_definition
            if s["prefix"] == prefix.lower()
            for p in s["privileges"]
            if p["privilege"].lower() == name.lower()
        ]
        assert expected
        assert parliament.expand_action(action) == expected
    info = statement.get_privilege_info("s3", "GetObject")
    assert info["privilege"] == "GetObject"
    assert info["service_resources"]
    assert parliament.expand_action("s3:Get*") == parliament.expand_action("s3:get*")


def test_action_star_does_linear_work(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Before the index each allowed action was resolved ~5 times over the whole table."""
    calls = 0
    real = parliament.policy.Policy.get_allowed_resources

    def counting(self, prefix, name):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        return real(self, prefix, name)

    monkeypatch.setattr(parliament.policy.Policy, "get_allowed_resources", counting)
    document = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
    }
    findings = parliament_findings(PolicySource("p.json", "p", document))
    known = len(parliament.expand_action("*"))
    assert {f.rule for f in findings} >= {"parliament:PRIVILEGE_ESCALATION"}
    assert calls <= known * 1.2, (calls, known)
