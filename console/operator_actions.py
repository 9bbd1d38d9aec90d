"""Operator actions: ask first (``y``, a reason, a form), send, report what the server said.

One object, created by the App and handed down to every screen, holds the client and the
dialogs. What an item offers comes only from its server-built ``actions``; every
confirmation names its target; nothing is checked against the console's copy first (a stale
copy must not refuse a valid action: the server decides, and a 409 refetches). Requests run
in App workers, so leaving a screen never cancels an action already on the wire. Each answer
goes up to the App as an :class:`~console.messages.ActionReported` message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from decimal import Decimal
from typing import Any, Literal

from rich.markup import escape
from textual.app import App

from console.client import ConsoleClient
from console.dialogs import ConfirmScreen, FormField, FormScreen, PromptScreen
from console.exceptions import (
    ApiError,
    BackendUnavailableError,
    BlockedByLedgerError,
    ConflictError,
    NotFoundError,
)
from console.messages import ActionReported
from console.models import InterruptionDetail, PullRequest, ResolveResult, RosterEntry
from console.models_agents import AgentPause
from console.models_inbox import ApprovalDecisionOut, HandoffOut, InboxItem, JobOut
from console.models_operators import Role
from console.takeover import (
    Outcome,
    blocked_outcome,
    execute_warning,
    parse_attempts,
    parse_valor,
    resolve_outcome,
    uncertain_outcome,
)

READONLY_REASON = "read-only console"
ITEM_KEY_PREFIX = {
    "pr": "pr",
    "pr_blocked": "pr",
    "pr_stuck": "pr",
    "job_dead": "job",
    "action_approval": "approval",
    "handoff": "handoff",
    "interruption": "int",
    "uncertain": "unc",
    "unanswered": "conv",
}
"""Inbox kind → the prefix of the key detail screens listen on (``pr:<id>``...)."""
VERB = {
    "approve": "Approve",
    "reject": "Reject",
    "close": "Close",
    "unblock": "Unblock",
    "rerun": "Rerun the gates of",
    "accept": "Accept",
    "decline": "Decline",
    "claim": "Take over",
    "grant": "Grant attempts on",
    "execute": "Execute",
    "edit": "Edit & execute",
    "deny": "Deny",
    "hand_back": "Hand back",
    "reconcile": "Reconcile",
    "settle": "Settle",
    "drop": "Drop",
    "release": "Release",
    "resume": "Resume the agent for",
}
NOUN = {
    "pr": "PR",
    "pr_blocked": "blocked PR",
    "pr_stuck": "stuck PR",
    "job_dead": "stopped job",
    "action_approval": "held action",
    "handoff": "handoff",
    "interruption": "takeover",
    "uncertain": "uncertain refund",
    "unanswered": "unanswered customer",
}
RESOLVE_AS: dict[str, Literal["execute", "deny", "hand_back"]] = {
    "execute": "execute",
    "edit": "execute",
    "deny": "deny",
    "hand_back": "hand_back",
}
"""A takeover key → the resolve it sends (an edit is an execute with a corrected valor)."""
SETTLE_OUTCOMES = ("executado", "falhou")
RELEASED = "released: open again, back in the queue"


def item_key(item: InboxItem) -> str:
    """The key an item's detail screen and outcome are filed under."""
    return f"{ITEM_KEY_PREFIX.get(item.kind, item.kind)}:{item.target_id}"


def target_name(item: InboxItem) -> str:
    """``infra PR 3f2a…``, ``takeover #7``: the item as a confirmation names it."""
    noun = NOUN.get(item.kind, item.kind)
    if item.pr_kind and item.kind.startswith("pr"):
        noun = f"{item.pr_kind} {noun}"
    ident = f"#{item.target_id}" if item.kind == "interruption" else item.target_id
    return f"{noun} {ident}"


def describe(result: Any) -> Outcome:
    """What the server says happened, in one line (never a guess)."""
    if isinstance(result, ApprovalDecisionOut):
        pr = f" · PR {result.pr_id}" if result.pr_id else ""
        text = f"{result.approval.status}: {result.message or 'no message'}{pr}"
        ok = result.executed or result.approval.status == "rejected"
        return Outcome(text, "information" if ok else "warning", "green" if ok else "bold yellow")
    if isinstance(result, PullRequest):
        note = f" ({result.blocked_reason})" if result.blocked_reason else ""
        return Outcome(f"now {result.gate_status}{note}", "information", "green")
    if isinstance(result, HandoffOut):
        return Outcome(f"handoff {result.status}", "information", "green")
    if isinstance(result, JobOut):
        return Outcome(f"job {result.state}", "information", "green")
    if isinstance(result, AgentPause):
        state = "paused" if result.paused else "running: waiting customers are answered now"
        return Outcome(f"{result.agent} {state}", "information", "green")
    return Outcome("done", "information", "green")


def _check(parse: Callable[[str], object]) -> Callable[[str], str | None]:
    def check(text: str) -> str | None:
        got = parse(text)
        return got if isinstance(got, str) else None

    return check


def _outcome_check(text: str) -> str | None:
    return None if text.strip() in SETTLE_OUTCOMES else "type executado or falhou"


def _cancelled(verb: str) -> str:
    return f"{verb} cancelled — nothing sent"


class OperatorActions:
    """Every operator action of the console, under one operator's name."""

    def __init__(
        self, app: App[Any], client: ConsoleClient, operator: str, *, readonly: bool
    ) -> None:
        self.app = app
        self.client = client
        self.operator = operator
        """The name every action is sent under."""
        self.readonly = readonly
        self.role: Role | None = None
        """The token's role (``GET /api/me``); a viewer is read-only."""

    # -- the read-only refusal ------------------------------------------------------------

    def refuse_if_readonly(self, what: str) -> bool:
        """Say why and return True when the console is read-only."""
        if self.readonly:
            self.app.notify(f"{what} refused: {READONLY_REASON}", severity="warning")
            return True
        return False

    # -- Inbox items: the one entry point of every key ------------------------------------

    def act(self, item: InboxItem, name: str) -> None:
        """Run ``item``'s action ``name`` (only if the item offers it): confirm, reason or
        form first, then send."""
        verb = VERB.get(name, name.replace("_", " ").capitalize())
        if self.refuse_if_readonly(verb):
            return
        action = item.action(name)
        if action is None:
            self.app.notify(f"{target_name(item)} does not offer {name}", severity="warning")
            return
        if item.kind == "interruption" and item.target_id.isdigit():
            ident = int(item.target_id)
            if name == "claim":
                self._confirm_then_send(
                    item,
                    f"Take over {target_name(item)}?",
                    f"[b]{escape(item.title)}[/b]\n{escape(item.detail)}",
                    lambda: self.client.claim(ident, self.operator),
                )
            elif name == "grant":
                self._grant(item, ident)
            elif name == "release":
                self._release(item, ident)
            elif name in ("execute", "edit", "deny", "hand_back"):
                self.app.run_worker(
                    self._takeover_form(ident, name),
                    group="takeover-form",
                    exclusive=True,
                    exit_on_error=False,
                )
            return
        if item.kind == "uncertain" and name == "reconcile":
            self._confirm_then_send(
                item,
                f"Reconcile {target_name(item)} with the gateway?",
                f"[b]{escape(item.title)}[/b]\n{escape(item.detail)}",
                lambda: self.client.reconcile(item.target_id, self.operator),
                uncertain_outcome,
            )
            return
        if item.kind == "uncertain" and name == "settle":
            self._settle(item)
            return
        label = f"{verb} {target_name(item)}"
        title = escape(item.title or item.target_id)

        def send(reason: str = "") -> None:
            self._send(
                item_key(item),
                label,
                lambda: self.client.act(item, action, self.operator, reason),
                describe,
            )

        if action.reason == "required":

            def reasoned(reason: str | None) -> None:
                if reason:
                    send(reason)
                else:
                    self.app.notify(_cancelled(verb), timeout=2)

            self.app.push_screen(
                PromptScreen(
                    label,
                    f"Why? [b]{title}[/b] (required)",
                    placeholder="reason for the author",
                    submit_label=verb,
                ),
                reasoned,
            )
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                send()
            else:
                self.app.notify(_cancelled(verb), timeout=2)

        body = f"[b]{title}[/b]\n{escape(item.detail)}"
        self.app.push_screen(ConfirmScreen(f"{label}?", body), confirmed)

    # -- agents ---------------------------------------------------------------------------

    def pause_agent(self, entry: RosterEntry) -> None:
        """Ask, then pause ``entry``'s agent — or resume it when the roster shows it paused."""
        resume = entry.status == "paused"
        verb = "Resume" if resume else "Pause"
        if self.refuse_if_readonly(f"{verb} agent"):
            return
        if resume:
            who = f" (paused by {escape(entry.paused_by)})" if entry.paused_by else ""
            body = f"[b]{escape(entry.id)}[/b]{who} runs turns again, in every project."
        else:
            body = (
                f"[b]{escape(entry.id)}[/b] runs no new turn, in every project, until resumed.\n"
                "A turn already running finishes."
            )

        def done(confirmed: bool | None) -> None:
            if confirmed:
                self.app.run_worker(
                    self._send_agent_pause(entry.id, resume), group="actions", exit_on_error=False
                )
            else:
                self.app.notify(_cancelled(verb), timeout=2)

        self.app.push_screen(ConfirmScreen(f"{verb} agent {entry.id}?", body), done)

    # -- a takeover's reply box -----------------------------------------------------------

    def send_reply(self, item: InterruptionDetail, text: str) -> bool:
        """Send one operator message now; False (and why) when it cannot be sent."""
        if self.refuse_if_readonly("Reply"):
            return False
        if item.status != "claimed" or item.claimed_by != self.operator:
            self.app.notify(f"Take over interruption #{item.id} first (t)", severity="warning")
            return False
        self._send(
            f"int:{item.id}",
            f"Reply in {item.conversation}",
            lambda: self.client.reply(item.id, self.operator, text),
            lambda _: Outcome("sent to the customer's channel", "information", "green"),
        )
        return True

    # -- flows with a form ----------------------------------------------------------------

    def _confirm_then_send(
        self,
        item: InboxItem,
        title: str,
        body: str,
        call: Callable[[], Awaitable[Any]],
        outcome: Callable[[Any], Outcome] | None = None,
    ) -> None:
        label = title.rstrip("?")

        def done(ok: bool | None) -> None:
            if ok:
                self._send(item_key(item), label, call, outcome)
            else:
                self.app.notify(_cancelled(label.split(" ", 1)[0]), timeout=2)

        self.app.push_screen(ConfirmScreen(title, body), done)

    def _grant(self, item: InboxItem, ident: int) -> None:
        fields = [
            FormField(
                "attempts", "How many more attempts (1..10):", "3", check=_check(parse_attempts)
            ),
            FormField("reason", "Why (required, audited):", "reason for the record"),
        ]

        def confirm(answers: dict[str, str] | None) -> None:
            if not answers:
                self.app.notify(_cancelled("Grant"), timeout=2)
                return
            n = int(answers["attempts"])
            body = (
                f"The agent may try {escape(item.title)} "
                f"[b]{n}[/b] more time{'s' if n != 1 else ''}.\n"
                f"Reason: {escape(answers['reason'])}"
            )
            self._confirm_then_send(
                item,
                f"Grant {n} attempts on takeover #{ident}?",
                body,
                lambda: self.client.grant(ident, self.operator, n, answers["reason"]),
                lambda got: Outcome(
                    f"granted {n} more attempts (now {got.attempt_count} counted)",
                    "information",
                    "green",
                ),
            )

        self.app.push_screen(
            FormScreen(f"Grant attempts on takeover #{ident}", escape(item.title), fields),
            confirm,
        )

    def _release(self, item: InboxItem, ident: int) -> None:
        """Ask (the reason is optional), then give the takeover back to the queue."""
        label = f"Release {target_name(item)}"

        def answered(reason: str | None) -> None:
            if reason is None:
                self.app.notify(_cancelled("Release"), timeout=2)
                return
            self._send(
                item_key(item),
                label,
                lambda: self.client.release(ident, self.operator, reason),
                lambda _: Outcome(
                    "released: open again, back in the queue", "information", "green"
                ),
            )

        self.app.push_screen(
            PromptScreen(
                f"{label} back to the queue?",
                f"{item.title}\n{item.detail}\nIt is open again and the conversation goes back "
                "to the bot until someone takes it over.",
                placeholder="reason (optional, audited)",
                submit_label="Release",
                required=False,
            ),
            answered,
        )

    def _settle(self, item: InboxItem) -> None:
        fields = [
            FormField(
                "outcome", "Outcome (executado or falhou):", "executado", check=_outcome_check
            ),
            FormField("reason", "Why (required, audited):", "e.g. checked the gateway dashboard"),
        ]

        def confirm(answers: dict[str, str] | None) -> None:
            if not answers:
                self.app.notify(_cancelled("Settle"), timeout=2)
                return
            outcome: Literal["executado", "falhou"] = (
                "executado" if answers["outcome"] == "executado" else "falhou"
            )
            body = (
                f"Record {escape(item.title)} as [b]{outcome}[/b] by hand.\n"
                f"Reason: {escape(answers['reason'])}"
            )
            self._confirm_then_send(
                item,
                f"Settle {target_name(item)} as {outcome}?",
                body,
                lambda: self.client.settle(
                    item.target_id, self.operator, outcome, answers["reason"]
                ),
                uncertain_outcome,
            )

        self.app.push_screen(
            FormScreen(f"Settle {target_name(item)} by hand", escape(item.detail), fields),
            confirm,
        )

    async def _takeover_form(self, ident: int, verb: str) -> None:
        # Fetched fresh: the ledger may have moved since the screen last loaded.
        try:
            detail = await self.client.interruption(ident)
        except ApiError as exc:
            self.app.notify(f"Could not read takeover #{ident}: {exc.message}", severity="error")
            return
        label = VERB[verb]
        if detail.status != "claimed" or detail.claimed_by != self.operator:
            who = f" by {detail.claimed_by}" if detail.claimed_by else ""
            self.app.notify(
                f"Take over interruption #{ident} first (t); it is {detail.status}{who}",
                severity="warning",
            )
            return
        warning, _ = execute_warning(detail.ledger, detail.ferramenta)
        fields: list[FormField] = []
        if verb == "edit":
            asked = str(detail.argumentos.get("valor", ""))
            fields += [
                FormField(
                    "valor",
                    f"Corrected valor (the agent asked {asked or '?'}):",
                    "119.90",
                    check=_check(parse_valor),
                    value=asked,
                ),
                FormField("reason", "Why this valor (required, audited):", "reason for the record"),
            ]
        required = verb != "hand_back"
        fields.append(
            FormField(
                "reply",
                "Reply to the customer" + (" (required):" if required else " (optional):"),
                "message the customer will read",
                required=required,
            )
        )
        what = escape(f"{detail.ferramenta} for {detail.entity_text()}")
        intro = {
            "execute": f"Run {what} as the agent asked.",
            "edit": f"Run {what} with a corrected valor.",
            "deny": f"Do [b]not[/b] run {what}.",
            "hand_back": "Give the conversation back to the bot without running anything.",
        }[verb]
        body = intro + (f"\n{escape(warning)}" if verb in ("execute", "edit") else "")

        def answered(answers: dict[str, str] | None) -> None:
            if answers is None:
                self.app.notify(_cancelled(label), timeout=2)
                return
            self._confirm_resolve(detail, verb, answers, warning)

        self.app.push_screen(FormScreen(f"{label} takeover #{detail.id}", body, fields), answered)

    def _confirm_resolve(
        self, detail: InterruptionDetail, verb: str, answers: dict[str, str], warning: str
    ) -> None:
        valor = parse_valor(answers["valor"]) if verb == "edit" else None
        lines = []
        if verb in ("execute", "edit"):
            what = f" with valor [b]{valor}[/b]" if isinstance(valor, Decimal) else ""
            lines.append(
                f"Run [b]{escape(detail.ferramenta)}[/b] for {escape(detail.entity_text())}{what}."
            )
            lines.append(escape(warning))
        elif verb == "deny":
            lines.append(f"Do [b]not[/b] run {escape(detail.ferramenta)}; back to the bot.")
        else:
            lines.append("The bot takes the conversation back; nothing runs.")
        if answers.get("reason"):
            lines.append(f"Reason: {escape(answers['reason'])}")
        if answers.get("reply"):
            lines.append(f"Customer reads: “{escape(answers['reply'])}”")
        action = RESOLVE_AS[verb]
        label = f"{VERB[verb]} takeover #{detail.id}"

        def done(ok: bool | None) -> None:
            if not ok:
                self.app.notify(_cancelled(VERB[verb]), timeout=2)
                return
            self._send(
                f"int:{detail.id}",
                label,
                lambda: self.client.resolve(
                    detail.id,
                    self.operator,
                    action,
                    answers.get("reply", ""),
                    valor=valor if isinstance(valor, Decimal) else None,
                    reason=answers.get("reason", ""),
                ),
                lambda got: _resolved(action, got, detail.ferramenta),
                detail.ferramenta,
            )

        self.app.push_screen(ConfirmScreen(f"{label}?", "\n".join(lines)), done)

    # -- sending --------------------------------------------------------------------------

    def _send(
        self,
        item_key: str,
        label: str,
        call: Callable[[], Awaitable[Any]],
        describe: Callable[[Any], Outcome] | None = None,
        ferramenta: str = "",
    ) -> None:
        self._run(self._sent(item_key, label, call, describe, ferramenta))

    def _run(self, work: Coroutine[Any, Any, None]) -> None:
        self.app.run_worker(work, group="actions", exit_on_error=False)

    async def _sent(
        self,
        item_key: str,
        label: str,
        call: Callable[[], Awaitable[Any]],
        describe: Callable[[Any], Outcome] | None,
        ferramenta: str,
    ) -> None:
        """Send ``call``; report what the backend says happened, never a guess.

        ``describe`` turns the response into the real outcome; without it a 2xx is reported
        as done. A 409 ``blocked_by_ledger`` is reported with what the ledger holds. A
        success needs no feed line of the console's: the server's own event says it.
        """
        outcome: Outcome | None
        feed: tuple[str, str] | None = None
        try:
            result = await call()
        except BlockedByLedgerError as exc:
            outcome = blocked_outcome(exc.ledger, ferramenta or "the tool", exc.code)
            blocked = exc.code != "not_executed"
            self.app.notify(
                f"{label}: {outcome.text}",
                title="Blocked by the ledger (409)" if blocked else "Not executed (409)",
                severity="warning",
                timeout=12,
            )
            feed = ("console.blocked", f"{label} → 409: {outcome.text}")
        except ConflictError as exc:
            outcome = None
            self.app.notify(
                f"{label}: someone else acted first — {exc.message}. Refreshed.",
                title="Conflict (409)",
                severity="warning",
                timeout=8,
            )
            feed = ("console.conflict", f"{label} → 409: {exc.message}")
        except ApiError as exc:
            outcome = Outcome(f"failed: {exc.message}", "error", "bold red")
            self.app.notify(f"{label} failed: {exc.message}", severity="error", timeout=8)
            feed = ("console.error", f"{label} → failed: {exc.message}")
        else:
            outcome = describe(result) if describe else Outcome("done", "information", "green")
            title = "✓" if outcome.severity == "information" else label
            self.app.notify(f"{label}: {outcome.text}", title=title, severity=outcome.severity)
        self.app.post_message(ActionReported(item_key, outcome, feed))

    async def _send_agent_pause(self, agent_id: str, resume: bool) -> None:
        label = f"{'Resume' if resume else 'Pause'} {agent_id}"
        feed: tuple[str, str] | None = None
        try:
            if resume:
                state = await self.client.resume_agent(agent_id, self.operator)
            else:
                state = await self.client.pause_agent(agent_id, self.operator)
        except ConflictError as exc:
            self.app.notify(
                f"{label}: refused — {exc.message}. Roster refreshed.",
                title="Conflict (409)",
                severity="warning",
                timeout=8,
            )
            feed = ("console.conflict", f"{label} → 409: {exc.message}")
        except NotFoundError as exc:
            self.app.notify(
                f"{label}: {exc.message}", title="Unknown agent (404)", severity="error"
            )
            feed = ("console.error", f"{label} → 404: {exc.message}")
        except BackendUnavailableError as exc:
            text = f"no answer from the backend ({exc.message}); whether it took effect is unknown"
            self.app.notify(f"{label}: {text} — r refreshes", severity="error", timeout=12)
            feed = ("console.error", f"{label} → {text}")
        except ApiError as exc:
            self.app.notify(f"{label} failed ({exc.status}): {exc.message}", severity="error")
            feed = ("console.error", f"{label} → failed ({exc.status}): {exc.message}")
        else:
            if state.paused:
                text = f"paused by {state.paused_by}; it runs no new turn"
            else:
                text = f"resumed by {state.resumed_by or self.operator}; it runs turns again"
            self.app.notify(f"{agent_id} {text}", title="✓")
        self.app.post_message(ActionReported(f"agent:{agent_id}", None, feed, roster=True))


def _resolved(action: str, result: ResolveResult, ferramenta: str) -> Outcome:
    return resolve_outcome(action, result, ferramenta)
