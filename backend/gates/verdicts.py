"""From a gate run to the state machine: which verdict, if any, to record.

A ``skipped`` gate records no verdict: the subject stays in ``awaiting_qa`` /
``awaiting_secops`` (nothing passes in silence) and the author is not charged a
correction for a scanner this machine lacks; the caller surfaces the skipped list.

Waivers: the ids (fingerprints) an operator waived on this PR no longer count as
blocking. A skipped scanner is never waived (it has no finding to name), so a gate
whose only blockers are waived but which skipped a scanner is still ``skipped``.
"""

from __future__ import annotations

from collections.abc import Collection

from backend.gates.findings import Finding, ScanStatus
from backend.gates.runner import GateResult
from backend.gates.state import GateEvent


def effective_status(result: GateResult, waived: Collection[str] = ()) -> ScanStatus:
    """The gate's status once the waived findings stop counting."""
    if not waived:
        return result.status
    if _blocking(result, waived):
        return "fail"
    if any(s.status == "skipped" for s in result.scans):
        return "skipped"
    return "pass"


def verdict_event(result: GateResult, waived: Collection[str] = ()) -> GateEvent | None:
    """The ``GateEvent`` for one gate's result, or ``None`` when the gate was skipped."""
    status = effective_status(result, waived)
    if status == "skipped":
        return None
    passed = status == "pass"
    reason = None if passed else summarize(result, waived=waived)
    return GateEvent.qa(passed, reason) if result.gate == "qa" else GateEvent.secops(passed, reason)


def summarize(result: GateResult, limit: int = 5, waived: Collection[str] = ()) -> str:
    """A one-line summary of the blocking findings (kept as ``blocked_reason`` context)."""
    blocking = _blocking(result, waived)
    parts = [
        f"{f.tool}:{f.rule} {f.file}" + (f":{f.line}" if f.line else "") for f in blocking[:limit]
    ]
    more = f" (+{len(blocking) - limit} more)" if len(blocking) > limit else ""
    return f"{len(blocking)} blocking finding(s): " + "; ".join(parts) + more


def _blocking(result: GateResult, waived: Collection[str]) -> list[Finding]:
    return [f for f in result.findings if f.blocking and f.fingerprint not in waived]
