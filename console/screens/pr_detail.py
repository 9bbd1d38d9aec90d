"""PR detail (``enter`` on a PR of any kind: infra, dev, ADR): gate timeline, findings by
file, files and diff; the keys the PR's Inbox item offers; live from the event stream."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import ClassVar

from rich.console import Group
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static, TabbedContent, TabPane

from console.exceptions import ApiError, ContractError
from console.inert import inert, inert_text
from console.messages import ContractBroken
from console.models import Findings, PrFiles, PullRequestDetail
from console.models_inbox import InboxItem
from console.screens._inbox_keys import InboxKeysScreen
from console.screens.audit import ITEM_ACTIONS_SHOWN, render_item_actions
from console.view import ConsoleView
from console.widgets.footer import KeysFooter
from console.widgets.status_bar import StatusBar

GATE_STEPS = ("awaiting_qa", "awaiting_secops", "awaiting_human", "merged")


PR_KINDS = ("pr", "pr_blocked", "pr_stuck")


MERGED_DIFF = (
    "The backend sends no diff for a merged PR: it compares the branch with main, and main "
    "now contains the branch. The Files tab shows the files as merged."
)
NO_DIFF = "The branch changes nothing against main."
FINAL_STATUSES = ("merged", "closed")
"""Where a PR ends: nothing is left to approve, reject, close or re-run."""


class PrDetailScreen(InboxKeysScreen):
    """One PR: where it is in QA → SecOps → human, what the gates found, what changed."""

    TITLE = "PR"
    CSS_PATH = "detail.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("right,l", "tab(1)", "Next tab", show=False),
        Binding("left,h", "tab(-1)", "Prev tab", show=False),
        Binding("j", "scroll('down')", "Down", show=False),
        Binding("k", "scroll('up')", "Up", show=False),
    ]

    def __init__(self, view: ConsoleView, pr_id: str) -> None:
        super().__init__(view)
        self.pr_id = pr_id
        self.detail: PullRequestDetail | None = None
        self.loads = 0
        """Completed fetches (the live-update test and the bench watch it)."""
        self._item: InboxItem | None = None

    def compose(self) -> ComposeResult:
        """Status bar, summary, tabs."""
        yield StatusBar()
        yield Static("Loading…", id="summary")
        with TabbedContent(id="tabs"):
            with TabPane("Timeline", id="tab-timeline"), VerticalScroll():
                yield Static(id="timeline")
                yield Static(id="item-actions")
            with TabPane("Findings", id="tab-findings"), VerticalScroll():
                yield Static(id="findings")
            with TabPane("Diff", id="tab-diff"), VerticalScroll():
                yield Static(id="diff")
            with TabPane("Files", id="tab-files"), VerticalScroll():
                yield Static(id="files")
        yield KeysFooter()

    def on_mount(self) -> None:
        """Fetch the PR; refetch whenever an action on it finishes."""
        super().on_mount()
        self.view.item_changed.subscribe(self, self._item_changed)
        self.view.approvals_changed.subscribe(self, self._inbox_changed)
        self._inbox_changed(None)
        self.load()

    def _item_changed(self, key: str) -> None:
        task = self.detail.task_id if self.detail is not None else None
        if key in ("*", f"pr:{self.pr_id}") or (task and key == f"task:{task}"):
            self.load()

    def _inbox_changed(self, _: object) -> None:
        # The keys follow the PR's Inbox item; a PR that left the Inbox keeps its last
        # item, so a stale screen still sends and the server says what is true.
        self._item = next(
            (i for i in self.view.inbox if i.kind in PR_KINDS and i.target_id == self.pr_id),
            self._item,
        )
        self.refresh_bindings()

    def action_tab(self, step: int) -> None:
        """Cycle the tabs."""
        tabs = self.query_one(TabbedContent)
        ids = [p.id for p in tabs.query(TabPane)]
        index = (ids.index(tabs.active) + step) % len(ids) if tabs.active in ids else 0
        tabs.active = ids[index] or ""

    def action_scroll(self, direction: str) -> None:
        """Scroll the visible tab."""
        tabs = self.query_one(TabbedContent)
        pane = tabs.get_pane(tabs.active)
        getattr(pane.query_one(VerticalScroll), f"scroll_{direction}")()

    def current_item(self) -> InboxItem | None:
        """The PR's Inbox item (what the server says can be done to it now); none once
        the PR is merged or closed, where no action is left."""
        if self.detail is not None and self.detail.gate_status in FINAL_STATUSES:
            return None
        return self._item

    @work(exclusive=True, group="load", exit_on_error=False)
    async def load(self) -> None:
        """Screen-owned: popping the screen cancels a fetch nobody will see."""
        client = self.view.client
        try:
            detail, files, findings, actions = await asyncio.gather(
                client.pull_request(self.pr_id),
                client.pr_files(self.pr_id),
                client.pr_findings(self.pr_id),
                client.audit(ITEM_ACTIONS_SHOWN, target=self.pr_id),
            )
        except ApiError as exc:
            if isinstance(exc, ContractError):
                self.post_message(ContractBroken(exc.route, exc.field, exc.detail))
            self.query_one("#summary", Static).update(
                inert_text(f"Could not load: {exc.message}", "red")
            )
            return
        self.detail = detail
        self._display(detail, files, findings)
        self.query_one("#item-actions", Static).update(render_item_actions(actions))
        self.refresh_bindings()  # a final PR has no keys left
        self.loads += 1

    def _display(self, d: PullRequestDetail, files: PrFiles, findings: Findings) -> None:
        outcome = self.view.outcomes.get(f"pr:{d.id}")
        summary = Text.assemble(
            (f"{d.kind} PR ", "bold cyan"),
            (inert(d.title or d.id, multiline=False), "bold"),
            inert(
                f"  {d.id}"
                + (f" (remote #{d.remote_id})" if d.remote_id else "")
                + f" · {d.branch} @ {d.head[:8] or '?'}"
            )
            + "\n",
            "gate ",
            (d.gate_status, "bold reverse red" if d.gate_status == "awaiting_human" else "bold"),
            f" · corrections {d.gate_correction_count} · findings {d.findings_count}",
            (inert(f" · BLOCKED: {d.blocked_reason}") if d.blocked else "", "bold red"),
            ("\nlast action: " if outcome else "", "bold"),
            (inert(outcome.text) if outcome else "", outcome.style if outcome else ""),
        )
        self.query_one("#summary", Static).update(summary)
        self.query_one("#timeline", Static).update(self._timeline(d))
        self.query_one("#findings", Static).update(self._findings(findings))
        self.query_one("#diff", Static).update(
            Syntax(inert(files.diff), "diff", theme="ansi_dark", word_wrap=False)
            if files.diff
            else Text(MERGED_DIFF if d.gate_status == "merged" else NO_DIFF, style="dim")
        )
        self.query_one("#files", Static).update(self._files(files))

    @staticmethod
    def _timeline(d: PullRequestDetail) -> Table:
        reached = {t.status for t in d.timeline}
        steps = Text("  →  ".join(GATE_STEPS))
        for step in GATE_STEPS:
            if step in reached or step == d.gate_status:
                steps.highlight_words([step], "bold green")
        table = Table(title=steps, expand=True, box=None, title_justify="left")
        table.add_column("when", style="dim", no_wrap=True)
        table.add_column("status", style="bold")
        table.add_column("who")
        table.add_column("note")
        for t in d.timeline:
            table.add_row(
                t.ts.replace("T", " ")[:19],
                inert_text(t.status),
                inert_text(t.actor),
                inert_text(t.note, multiline=True),
            )
        return table

    @staticmethod
    def _findings(findings: Findings) -> Group | Text:
        if not findings.findings:
            return Text("No findings.", style="green")
        by_file: dict[str, list] = defaultdict(list)
        for f in findings.findings:
            by_file[f.file or "(no file)"].append(f)
        parts: list[Text] = []
        for path in sorted(by_file):
            parts.append(inert_text(path, "bold underline"))
            for f in sorted(by_file[path], key=lambda x: x.line or 0):
                parts.append(
                    Text.assemble(
                        f"  {f.line or '-':>4}  ",
                        (inert(f"{f.gate or '?'}/{f.tool}"), "cyan"),
                        " ",
                        (inert(f.rule), "yellow"),
                        " ",
                        (inert(f.severity), "red"),
                        "  ",
                        inert(f.message),
                    )
                )
        return Group(*parts)

    @staticmethod
    def _files(files: PrFiles) -> Group | Text:
        if not files.files:
            return Text("No files.", style="dim")
        parts: list[object] = []
        for f in files.files:
            parts.append(inert_text(f"── {f.path} ", "bold reverse"))
            content = inert(f.content)
            lexer = Syntax.guess_lexer(f.path, content)
            parts.append(Syntax(content, lexer, theme="ansi_dark", line_numbers=True))
        return Group(*parts)  # type: ignore[arg-type]
