"""A correction's input (pure): what the author's model turn is told, and what it did."""

from __future__ import annotations

from backend.prs.authoring import AuthorTurn, CorrectionRequest, correction_message, same_files
from backend.prs.records import PullRequest

PR = PullRequest.opened(
    id="act_1",
    kind="infra",
    project_id="prj_1",
    author="infra",
    title="Infra",
    branch="feature/infra-setup",
    head="0123456789abcdef",
    files=["Dockerfile"],
    pr_id="p",
    pr_url="file:///r#pr/p",
    session_id="ses_1",
)
QA = {"tool": "hadolint", "rule": "DL3007", "file": "Dockerfile", "line": 1,
      "severity": "warning", "message": "Using latest", "gate": "qa"}  # fmt: skip
HUMAN = {"tool": "operator", "rule": "rejected", "file": "", "line": None,
         "severity": "error", "message": "listen on 9000", "gate": "human"}  # fmt: skip


def test_the_message_carries_the_reason_the_findings_and_the_files() -> None:
    request = CorrectionRequest(
        PR, {"Dockerfile": "FROM python:latest\n"}, [QA, HUMAN], "propose_infra_pr"
    )

    message = correction_message(request)

    assert request.reasons == ["listen on 9000"]
    assert request.gate_findings == [QA]
    assert "The operator rejected it with this reason: listen on 9000" in message
    assert "- [qa] hadolint DL3007 Dockerfile:1: Using latest" in message
    assert "--- Dockerfile\nFROM python:latest\n--- end of Dockerfile" in message
    assert "0123456789" in message
    assert "call propose_infra_pr again" in message


def test_a_gate_failure_alone_has_no_operator_reason() -> None:
    message = correction_message(CorrectionRequest(PR, {}, [QA], "propose_infra_pr"))
    assert "operator" not in message
    assert "DL3007" in message


def test_what_the_turn_did_is_read_from_its_tool_results() -> None:
    turn = AuthorTurn(
        "done",
        [
            {"result": {"error": "invalid file entry", "code": "validation"}, "error": True},
            {"result": {"status": "unchanged"}, "error": False},
            {"result": {"status": "corrected"}, "error": False},
        ],
    )
    assert turn.statuses() == ["unchanged", "corrected"]
    assert turn.errors() == ["invalid file entry"]
    assert AuthorTurn(None).statuses() == []


def test_same_files_means_every_proposed_file_is_already_at_the_head() -> None:
    head = {"a": "1", "b": "2"}
    assert same_files(head, {"a": "1"})
    assert same_files(head, {"a": "1", "b": "2"})
    assert not same_files(head, {"a": "1", "b": "3"})
    assert not same_files(head, {"c": "1"})
