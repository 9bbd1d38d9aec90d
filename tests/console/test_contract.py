"""The console's models against the backend's ``/openapi.json``: a drift fails here.

For every route the console reads, the route's 2xx response schema (built from
``create_app(settings).openapi()``, no server needed) must be a real schema, and each field
the console's model declares must exist there, be required there when the console requires
it, and carry only types (and enum values) the console's model accepts.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import pytest
from pydantic import BaseModel, TypeAdapter

from console.models import (
    ActivityLine,
    Approvals,
    Conversation,
    Event,
    Findings,
    Health,
    Interruption,
    InterruptionDetail,
    Message,
    PrFiles,
    PullRequest,
    PullRequestDetail,
    ResolveResult,
    Resync,
    RosterEntry,
    StreamEvent,
    UncertainOut,
)
from console.models_agents import AgentPause, AgentTurn
from console.models_inbox import ApprovalDecisionOut, ApprovalOut, HandoffOut, InboxItem, JobOut

Schema = dict[str, Any]
PR = "/api/prs/{}"
ROUTES: list[tuple[str, str, Any]] = [
    ("get", "/healthz", Health),
    ("get", "/api/roster", list[RosterEntry]),
    ("get", "/api/events", list[Event]),
    ("get", "/api/activity", list[ActivityLine]),
    ("get", "/api/approvals", Approvals),
    ("get", PR, PullRequestDetail),
    ("get", PR + "/files", PrFiles),
    ("get", PR + "/findings", Findings),
    *[
        ("post", f"{PR}/{verb}", PullRequest)
        for verb in ("approve", "reject", "close", "unblock", "rerun")
    ],
    ("get", "/api/interruptions/{}", InterruptionDetail),
    ("post", "/api/interruptions/{}/claim", Interruption),
    ("post", "/api/interruptions/{}/resolve", ResolveResult),
    ("post", "/api/interruptions/{}/reply", Message),
    ("post", "/api/interruptions/{}/grant", Interruption),
    ("post", "/api/interruptions/{}/release", Interruption),
    ("get", "/api/conversations/{}", Conversation),
    ("post", "/api/uncertain/{}/reconcile", UncertainOut),
    ("post", "/api/uncertain/{}/settle", UncertainOut),
    ("get", "/api/inbox", list[InboxItem]),
    ("get", "/api/approvals/{}", ApprovalOut),
    ("post", "/api/approvals/{}/approve", ApprovalDecisionOut),
    ("post", "/api/approvals/{}/reject", ApprovalDecisionOut),
    ("get", "/api/handoffs", list[HandoffOut]),
    ("post", "/api/handoffs/{}/accept", HandoffOut),
    ("post", "/api/handoffs/{}/decline", HandoffOut),
    ("post", "/api/jobs/{}/rerun", JobOut),
    ("post", "/api/jobs/{}/drop", JobOut),
    ("post", "/api/agents/{}/pause", AgentPause),
    ("post", "/api/agents/{}/resume", AgentPause),
    ("get", "/api/agents/{}/turns", list[AgentTurn]),
]
"""(method, path with ``{}`` for any path parameter, what the console parses the body as)."""
STREAM_MESSAGES: list[tuple[str, Any]] = [
    ("StreamEventData", StreamEvent),
    ("StreamResyncData", Resync),
]
"""The SSE stream is not a JSON response: its messages' ``data`` are named component schemas."""


@pytest.fixture(scope="module")
def openapi(tmp_path_factory: pytest.TempPathFactory) -> Schema:
    from backend.api.app import create_app
    from backend.settings import load_settings

    settings = load_settings(data_dir=tmp_path_factory.mktemp("openapi"), token="t")
    return create_app(settings).openapi()


@pytest.mark.parametrize(
    ("method", "path", "shape"), ROUTES, ids=[f"{m} {p}" for m, p, _ in ROUTES]
)
def test_console_model_matches_the_route_schema(
    openapi: Schema, method: str, path: str, shape: Any
) -> None:
    backend = _response_schema(openapi, method, path)
    console = TypeAdapter(shape).json_schema()
    assert drift(console, console, backend, openapi, path) == []


@pytest.mark.parametrize(
    ("component", "shape"), STREAM_MESSAGES, ids=[c for c, _ in STREAM_MESSAGES]
)
def test_console_stream_models_match_the_stream_schemas(
    openapi: Schema, component: str, shape: Any
) -> None:
    components = openapi.get("components", {}).get("schemas", {})
    assert component in components, f"/openapi.json does not describe the stream's {component}"
    console = TypeAdapter(shape).json_schema()
    assert drift(console, console, components[component], openapi, component) == []


def test_the_checker_sees_a_renamed_field_a_wrong_type_and_an_untyped_route() -> None:
    class Usage(BaseModel):
        input_tokens: int
        output_tokens: int
        cost_usd: float | None

    class Agent(BaseModel):
        id: str
        role: str
        status: int  # the console reads a closed set of strings
        model: str | None
        autonomy: dict[str, str]
        detail: str
        usage: Usage | None
        paused_by: str | None

    class Renamed(BaseModel):
        id: int
        conversation: str
        pedido: str  # the old name; the console reads entidade_id
        entidade: Literal["pedidoId", "clienteId"]
        attempt_count: int
        status: Literal["open", "claimed", "resolved", "lost"]

    problems = _drift_against(list[RosterEntry], list[Agent])
    assert problems == ["/x[].status: backend sends integer, console reads string"]
    renamed = _drift_against(Interruption, Renamed)
    assert "/x.entidade_id: not in the backend's schema" in renamed
    assert "/x.status: backend may send 'lost', console reads ['claimed', 'open', 'resolved']" in (
        renamed
    )
    assert _drift_against(list[RosterEntry], list[dict[str, Any]]) == [
        "/x[]: untyped (no response model)"
    ]
    assert _drift_against(Interruption, Interruption) == []


def _drift_against(console_shape: Any, backend_shape: Any) -> list[str]:
    backend = TypeAdapter(backend_shape).json_schema()
    console = TypeAdapter(console_shape).json_schema()
    return drift(console, console, backend, backend, "/x")


def drift(c: Schema, c_root: Schema, b: Schema, b_root: Schema, where: str) -> list[str]:
    """What the console's schema ``c`` expects that the backend's ``b`` does not promise."""
    c, b = _deref(c, c_root), _deref(b, b_root)
    if not b:
        return [f"{where}: untyped (no response model)"]
    c_kinds, b_kinds = _kinds(c, c_root), _kinds(b, b_root)
    if c_kinds and not b_kinds <= c_kinds:
        extra = ", ".join(sorted(b_kinds - c_kinds))
        return [f"{where}: backend sends {extra}, console reads {', '.join(sorted(c_kinds))}"]
    c_enum, b_enum = _enum(c, c_root), _enum(b, b_root)
    if c_enum is not None and b_enum is not None and not b_enum <= c_enum:
        extra = ", ".join(repr(v) for v in sorted(b_enum - c_enum))
        return [f"{where}: backend may send {extra}, console reads {sorted(c_enum)}"]
    c_obj, b_obj = _branch(c, c_root, "object"), _branch(b, b_root, "object")
    if c_obj is not None and b_obj is not None and "properties" in c_obj:
        if _is_untyped_object(b_obj):
            return [f"{where}: untyped (no response model)"]
        return _fields(c_obj, c_root, b_obj, b_root, where)
    c_arr, b_arr = _branch(c, c_root, "array"), _branch(b, b_root, "array")
    if c_arr is not None and b_arr is not None and c_arr.get("items"):
        return drift(c_arr["items"], c_root, b_arr.get("items", {}), b_root, f"{where}[]")
    return []


def _fields(c: Schema, c_root: Schema, b: Schema, b_root: Schema, where: str) -> list[str]:
    problems: list[str] = []
    b_props, b_required = b.get("properties", {}), set(b.get("required", []))
    for name, sub in c["properties"].items():
        if name not in b_props:
            problems.append(f"{where}.{name}: not in the backend's schema")
        elif name in c.get("required", []) and not _always_sent(name, b_props, b_required):
            problems.append(f"{where}.{name}: console requires it, backend may omit it")
        else:
            problems += drift(sub, c_root, b_props[name], b_root, f"{where}.{name}")
    return problems


def _always_sent(name: str, props: Schema, required: set[str]) -> bool:
    # A response model serializes its defaults, so a field with a default is always there.
    return name in required or "default" in props[name]


def _deref(s: Schema, root: Schema) -> Schema:
    while "$ref" in s:
        name = s["$ref"].rsplit("/", 1)[-1]
        s = (root.get("$defs") or root.get("components", {}).get("schemas", {}))[name]
    return s


def _alternatives(s: Schema, root: Schema) -> list[Schema]:
    s = _deref(s, root)
    options = s.get("anyOf") or s.get("oneOf")
    if options:
        return [alt for o in options for alt in _alternatives(o, root)]
    return [s]


def _kinds(s: Schema, root: Schema) -> set[str]:
    kinds: set[str] = set()
    for alt in _alternatives(s, root):
        if "type" not in alt and "const" not in alt and "enum" not in alt:
            return set()  # "anything": nothing to compare
        kinds |= {alt["type"]} if "type" in alt else {_json_kind(v) for v in _values(alt)}
    # An integer is a valid JSON number; the console reading numbers accepts integers.
    return kinds | ({"integer"} if "number" in kinds else set())


def _values(s: Schema) -> list[Any]:
    return list(s["enum"]) if "enum" in s else [s["const"]]


def _enum(s: Schema, root: Schema) -> set[Any] | None:
    values: set[Any] = set()
    for alt in _alternatives(s, root):
        if alt.get("type") == "null":
            continue
        if "enum" not in alt and "const" not in alt:
            return None
        values |= set(_values(alt))
    return values


def _branch(s: Schema, root: Schema, kind: str) -> Schema | None:
    return next((a for a in _alternatives(s, root) if a.get("type") == kind), None)


def _is_untyped_object(s: Schema) -> bool:
    """An object without named fields (``dict[str, Any]``): nothing the console could check."""
    return s.get("type") == "object" and not s.get("properties")


def _json_kind(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string"}.get(
        type(value), "null" if value is None else "object"
    )


def _response_schema(spec: Schema, method: str, path: str) -> Schema:
    pattern = re.compile("^" + re.escape(path).replace(r"\{\}", r"\{[^/]+\}") + "$")
    matches = [p for p in spec["paths"] if pattern.match(p)]
    assert matches, f"{path} is not in /openapi.json"
    operation = spec["paths"][matches[0]][method]
    ok = {code: r for code, r in operation["responses"].items() if code.startswith("2")}
    assert ok, f"{method.upper()} {path}: no 2xx response"
    schema = next(iter(ok.values())).get("content", {}).get("application/json", {}).get("schema")
    assert schema, f"{method.upper()} {path}: no JSON schema (declare a response model)"
    return schema
