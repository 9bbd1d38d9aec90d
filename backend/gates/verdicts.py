"""From a gate run to the state machine: which verdict, if any, to record.

A ``skipped`` gate records no verdict: the subject stays in ``awaiting_qa`` /
``awaiting_secops`` (nothing passes in silence) and the author is not charged a
correction for a scanner this machine lacks; the caller surfaces the skipped list.
"""

from __future__ import annotations

from backend.gates.runner import GateResult
from backend.gates.state import GateEvent


def verdict_event(result: GateResult) -> GateEvent | None:
    """The ``GateEvent`` for one gate's result, or ``None`` when the gate was skipped."""
    if result.status == "skipped":
        return None
    passed = result.status == "pass"
    reason = None if passed else summarize(result)
    return GateEvent.qa(passed, reason) if result.gate == "qa" else GateEvent.secops(passed, reason)


def summarize(result: GateResult, limit: int = 5) -> str:
    """A one-line summary of the blocking findings (kept as ``blocked_reason`` context)."""
    blocking = [f for f in result.findings if f.blocking]
    parts = [
        f"{f.tool}:{f.rule} {f.file}" + (f":{f.line}" if f.line else "") for f in blocking[:limit]
    ]
    more = f" (+{len(blocking) - limit} more)" if len(blocking) > limit else ""
    return f"{len(blocking)} blocking finding(s): " + "; ".join(parts) + more
