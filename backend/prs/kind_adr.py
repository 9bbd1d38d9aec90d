"""The Arquiteto's ADR pull requests (kind ``adr``) through the one PR pipeline.

An ADR is one markdown file ``docs/adr/NNNN-<slug>.md`` on its own branch, proposed through
``decide()`` (approving the ask opens the PR), then QA, SecOps and an operator's approve
like every other PR (:func:`adr_proposal` gives the number and key). The kind registers
itself in :data:`~backend.prs.kinds.RULES`; :mod:`backend.prs.flow` imports this module so
every pipeline knows it. :class:`AdrTool` is the Arquiteto's tool, injected into the
agents' tools (``backend.agents`` never imports this package).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from backend.events import EventType
from backend.exceptions import ValidationError
from backend.prs.git import DEFAULT_BRANCH
from backend.prs.kinds import RULES, Emit, Fixer, KindRules, emit
from backend.prs.proposals import Proposal
from backend.prs.records import Finding, PullRequest, PullRequests

ADR_DIR = "docs/adr"
_NUMBERED = re.compile(r"(?:^|/)adr/(\d{4})-")
_FILE = re.compile(r"^docs/adr/(\d{4})-")


def slugify(text: str, limit: int = 48) -> str:
    """``Contêineres por módulo`` → ``conteineres-por-modulo`` (ASCII, for paths/branches)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    return slug[:limit].rstrip("-") or "decision"


def adr_name(key: str | None) -> str:
    """``NNNN-<slug>`` from an ADR PR's key ``<project>/adr/NNNN-<slug>``."""
    if not key or "/adr/" not in key:
        raise ValidationError(f"not an ADR key: {key!r}")
    return key.split("/adr/", 1)[1]


class AdrRules(KindRules):
    """The Arquiteto's ADR PR on ``adr/NNNN-<slug>``.

    It subclasses ``KindRules``, so ``kinds`` cannot import it: the kind registers itself in
    :data:`~backend.prs.kinds.RULES` when :mod:`backend.prs.flow` imports this module.
    """

    kind = "adr"
    action = "open_adr_pr"
    changed_type = EventType.ADR_GATE_CHANGED

    def branch(self, *, task_id: str | None) -> str:
        return f"adr/{adr_name(task_id)}"

    def existing(
        self, prs: PullRequests, *, session_id: str | None, task_id: str | None
    ) -> PullRequest | None:
        if not task_id:
            raise ValidationError("an ADR PR needs its key (see adr_proposal)")
        return prs.of_task(task_id)

    def approval_payload(
        self, title: str, files: dict[str, str], task_id: str | None
    ) -> dict[str, Any]:
        # Everything approving needs to open the very PR that was proposed.
        return {
            "title": title,
            "task_id": task_id,
            "paths": sorted(files),
            "files": [{"path": p, "content": c} for p, c in sorted(files.items())],
        }

    def ref(self, pr: PullRequest) -> dict[str, Any]:
        return {"pr_action_id": pr.id, "adr": adr_name(pr.task_id)}

    def verdict_ref(self, pr: PullRequest) -> dict[str, Any]:
        return {"pr_action_id": pr.id, "task_id": None, "kind": "adr"}

    def label(self, pr: PullRequest) -> str:
        return f"ADR PR {pr.id}"

    def commit_message(self, pr_id: str, title: str, task_id: str | None) -> str:
        return f"{title}\n\nADR {adr_name(task_id)} (PR {pr_id})"

    def merge_message(self, pr: PullRequest, operator: str) -> str:
        return f"Merge ADR {adr_name(pr.task_id)}: {pr.title}\n\nApproved by {operator}"

    def opened(self, pr: PullRequest) -> list[Emit]:
        payload = {
            **self.ref(pr),
            "branch": pr.branch,
            "paths": list(pr.files),
            "pr_url": pr.pr_url,
            "gate_status": pr.gate_status,
        }
        return [emit(EventType.ADR_PR_OPENED, payload, pr.author)]

    def merged(self, pr: PullRequest, operator: str) -> list[Emit]:
        return [emit(EventType.ADR_PR_MERGED, {**self.ref(pr), "operator": operator}, None)]

    def proposal_failed(self, pr_id: str, error: str, author: str) -> Emit | None:
        return emit(EventType.ADR_PR_FAILED, {"pr_action_id": pr_id, "error": error}, author)

    def job_failed(self, pr: PullRequest | None, pr_id: str, error: str) -> Emit | None:
        payload = {"pr_action_id": pr_id, "error": f"gate run failed: {error}"}
        return emit(EventType.ADR_PR_FAILED, payload, "qa")

    def correct(
        self, files: dict[str, str], findings: list[Finding], fixer: Fixer
    ) -> dict[str, str]:
        # No fixer rewrites a decision: the Arquiteto (or a human) must.
        return dict(files)


def adr_proposal(
    flow: Any,
    *,
    project_id: str,
    session_id: str | None,
    author: str,
    title: str,
    content: str,
    slug: str | None = None,
) -> Proposal:
    """The proposal of one ADR: its next number, file, and key.

    The file is ``docs/adr/NNNN-<slug>.md`` on branch ``adr/NNNN-<slug>``, proposed by
    ``propose_adr_pr`` through ``decide()`` (``open_adr_pr`` asks by default: the approval
    carries the file, and approving it opens the PR). The PR's ``task_id`` holds its key
    ``<project id>/adr/NNNN-<slug>`` (unique across projects), which is how a correction finds
    the same PR again. The number is the next one after every ADR the project has on
    ``main``, in a PR (open or not) or in a pending approval.

    Args:
        flow: the :class:`~backend.prs.flow.PrFlow` (its store, PRs and git).
    """
    title = " ".join(title.split())
    if not title or not content.strip():
        raise ValidationError("an ADR needs a title and content")
    name = f"{_next_number(flow, project_id):04d}-{slugify(slug or title)}"
    body = content.strip() + "\n"
    if not body.startswith("#"):
        body = f"# {title}\n\n{body}"
    return Proposal(
        kind="adr",
        project_id=project_id,
        title=title,
        files={f"{ADR_DIR}/{name}.md": body},
        author=author,
        session_id=session_id,
        task_id=f"{project_id}/adr/{name}",
    )


def _next_number(flow: Any, project_id: str) -> int:
    taken: set[int] = set()
    with flow.db.transaction(write=False) as tx:
        keys = [r["task_id"] for r in tx.all("pr_adr_keys_of_project", {"project_id": project_id})]
    keys += [
        str(a.payload.get("task_id") or "")
        for a in flow.store.approvals.pending()
        if a.action == "open_adr_pr" and a.project_id == project_id
    ]
    taken |= {int(m.group(1)) for k in keys if (m := _NUMBERED.search(k or ""))}
    if flow.store.project(project_id).repo_path:
        git = flow.git(project_id)
        git.ensure_repo()
        taken |= {int(m.group(1)) for p in git.list_files(DEFAULT_BRANCH) if (m := _FILE.match(p))}
    return max(taken, default=0) + 1


class AdrTool:
    """``propose_adr_pr`` over a pipeline: decide() allows → the ADR PR is committed and
    opened now; asks → a pending approval (approving it opens the PR); denies → an error."""

    def __init__(self, flow: Any) -> None:
        self.flow = flow

    def __call__(self, ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
        """Run the tool for the turn ``ctx`` (a ``TurnContext``) with the model's ``args``."""
        if not ctx.project_id:
            raise ValidationError(f"{ctx.agent_id} needs a project")
        proposal = adr_proposal(
            self.flow,
            project_id=ctx.project_id,
            session_id=ctx.session_id,
            author=ctx.agent_id,
            title=str(args.get("title") or ""),
            content=str(args.get("content") or ""),
            slug=args.get("slug"),
        )
        result: dict[str, Any] = self.flow.propose(proposal).to_dict()
        return result


RULES["adr"] = AdrRules()
