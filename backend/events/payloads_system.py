"""Payload models of the backend's own events and of the operators' audit trail: scanner
provisioning, background task failures, the benchmark tick, ``operator.action``.

The backend's own events, apart from the product's: the agents' and the customers' events
live in :mod:`backend.events.payloads` (same base, same rules).
"""

from __future__ import annotations

from backend.events.payloads import Payload

# -- the backend itself ----------------------------------------------------------------------


class ToolProvisioning(Payload):
    tool: str
    detail: str


class ToolReady(Payload):
    tool: str
    path: str


class ToolFailed(Payload):
    tool: str
    error: str


class TaskFailed(Payload):
    task: str  # the background task's name
    error: str


class JobFate(Payload):
    job_id: int
    kind: str  # the job's kind (gates, dev, deliver, reconcile...)
    unique_key: str | None = None
    attempts: int
    error: str | None = None  # its last attempt's error
    operator: str | None = None  # who reran or dropped it (None: the engine buried it)
    reason: str | None = None


class BenchTick(Payload):
    i: int
    t: float  # the producer's wall clock, for the latency measurement


# -- operators -------------------------------------------------------------------------------


class OperatorAction(Payload):
    """One acting request, as the audit trail keeps it (``GET /api/audit``)."""

    operator: str  # the token's operator: who really acted
    role: str
    action: str  # the route's name, e.g. ``approve``
    method: str
    path: str
    target: dict[str, str]  # the path's ids, e.g. ``{"pr_action_id": "pr-1"}``
    subject: str | None = None  # the first of them: the item acted on (``?target=``)
    outcome: str  # done | refused (403/409) | failed (5xx)
    status: int  # the HTTP status answered
    reason: str | None = None
    as_operator: str | None = None  # the bootstrap admin acting in this operator's name
    body_operator: str | None = None  # a body naming another operator (ignored)
    error: str | None = None  # the error code of a refused or failed action
