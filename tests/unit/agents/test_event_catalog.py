"""The event catalog is complete: every EventType has a meaning, a payload model and its own
activity line, and nothing in backend/ emits a name that is not a member."""

from __future__ import annotations

import ast
import re
import types
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import pytest
from pydantic import BaseModel

from backend.agents import policy, roster
from backend.agents.activity import as_event, generic_text, render
from backend.agents.activity_texts import RENDERERS
from backend.events import DESCRIPTIONS, EVENTS, PAYLOADS, EventType, check_payload, event_type
from backend.events import payloads as p
from backend.exceptions import ValidationError
from backend.guard import conversations, interruptions, orchestrator

BACKEND = Path(__file__).resolve().parents[3] / "backend"


# -- every member has a description, a model and its own line -------------------------------


def test_the_catalog_and_its_views_cover_exactly_the_enum() -> None:
    assert set(EVENTS) == set(PAYLOADS) == set(DESCRIPTIONS) == set(EventType)
    assert set(RENDERERS) == set(EventType)


@pytest.mark.parametrize("type_", list(EventType))
def test_every_type_has_a_description_and_a_payload_model(type_: EventType) -> None:
    assert len(DESCRIPTIONS[type_]) > 10
    assert issubclass(PAYLOADS[type_], p.Payload)


def sample(annotation: Any, name: str = "x") -> Any:
    """A value of ``annotation`` (both branches of a union are tried by the caller's model)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return args[0]
    if origin in (Union, types.UnionType):
        return sample(next(a for a in args if a is not type(None)), name)
    if origin is list:
        return [sample(args[0], name), sample(args[0], name + "2")]
    if origin is dict:
        return {"key": sample(args[1], name)}
    if annotation is str:
        return f"{name}-1"
    if annotation is bool:
        return True
    if annotation is int:
        return 2
    if annotation is float:
        return 1.5
    return f"{name}-value"  # Any, JsonValue


def sample_payload(model: type[BaseModel]) -> dict[str, Any]:
    """Every field of ``model`` (optional ones too) filled with a value of its type."""
    return {name: sample(field.annotation, name) for name, field in model.model_fields.items()}


@pytest.mark.parametrize("type_", list(EventType))
def test_every_type_renders_a_sample_of_its_model_with_its_own_text(type_: EventType) -> None:
    payload = sample_payload(PAYLOADS[type_])
    check_payload(type_, payload)  # the sample really fits the model
    event = {"id": 1, "type": type_.value, "ts": "t", "agent": "someone", "payload": payload}
    line = render(event)
    assert line.kind == type_.value
    assert line.text != generic_text(as_event(event))


def test_a_type_without_a_renderer_would_get_the_generic_line() -> None:
    # The check above can fail: an unknown type renders as exactly the generic line.
    event = {"id": 1, "type": "made.up", "agent": "someone", "payload": {"a": 1}}
    assert render(event).text == generic_text(as_event(event))


# -- the closed value sets agree with the domain's own Literals ------------------------------


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (p.Resultado, orchestrator.Resultado),
        (p.Motivo, interruptions.Motivo),
        (p.Autor, conversations.Role),
        (p.Outcome, policy.Outcome),
        (p.Stage, policy.Stage),
        (p.AgentStatus, roster.Status),
    ],
)
def test_payload_value_sets_match_the_domain(ours: Any, theirs: Any) -> None:
    assert set(get_args(ours)) == set(get_args(theirs))


# -- names and payloads that do not fit are refused ------------------------------------------


def test_an_unknown_name_is_a_validation_error() -> None:
    with pytest.raises(ValidationError, match=r"unknown event type 'infra\.pr_openned'"):
        event_type("infra.pr_openned")
    assert event_type("infra.pr_opened") is EventType.INFRA_PR_OPENED


@pytest.mark.parametrize(
    ("payload", "problem"),
    [
        ({"status": "working"}, None),
        ({"status": "working", "detail": "x", "extra": 1}, "extra: Extra inputs"),
        ({"detail": "x"}, "status: Field required"),
        ({"status": "sleeping", "detail": ""}, "status: Input should be"),
    ],
)
def test_payloads_are_checked_against_their_model(
    payload: dict[str, Any], problem: str | None
) -> None:
    if problem is None:
        check_payload(EventType.AGENT_STATUS, payload)
        return
    with pytest.raises(ValidationError, match=f"agent.status does not fit .*{problem}"):
        check_payload(EventType.AGENT_STATUS, payload)


def test_the_attempt_record_keeps_what_the_caller_sent() -> None:
    record = {
        "evento": "TENTATIVA_DE_FERRAMENTA_REGISTRADA",
        "timestamp": "2026-08-08T09:16:41.902Z",
        "conversaId": "c1",
        "pedidoId": 4821,  # argumentos_invalidos: a number where a string belongs
        "ferramenta": "emitir-reembolso",
        "tentativaNumero": 0,
        "resultado": "argumentos_invalidos",
        "chaveIdempotencia": None,
        "detalhe": "pedidoId: Input should be a valid string",
    }
    check_payload(EventType.TENTATIVA_DE_FERRAMENTA_REGISTRADA, record)
    with pytest.raises(ValidationError, match="resultado"):
        check_payload(
            EventType.TENTATIVA_DE_FERRAMENTA_REGISTRADA, {**record, "resultado": "sucesso"}
        )


# -- nothing in backend/ emits a free string ------------------------------------------------

EMITTERS = {"append", "append_in", "emit", "_emit", "_append", "_event"}
EVENT_NAME = re.compile(r"[a-z_]+(\.[a-z_]+)+|[A-Z]+(_[A-Z]+)+")


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _receiver(node: ast.AST) -> str | None:
    return _name(node.value) if isinstance(node, ast.Attribute) else None


def emitted_names(source: str) -> list[tuple[int, str, str]]:
    """``(line, kind, name)`` for each event name passed to an emitter in ``source``.

    ``kind`` is ``literal`` (a string constant), ``fstring`` (its pattern, placeholders as
    ``*``) or ``member`` (``EventType.X``). ``events.append(...)``, ``x.append_in(tx, ...)``,
    ``self._emit(...)`` and ``asyncio.to_thread(events.append, ...)`` all count.
    """
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func, args = node.func, list(node.args)
        if _name(func) == "to_thread" and args and _name(args[0]) in EMITTERS:
            func, args = args[0], args[1:]
        name = _name(func)
        if name not in EMITTERS:
            continue
        if name == "append" and (_receiver(func) or "") not in ("events", "log"):
            continue  # list.append and friends
        for arg in args + [k.value for k in node.keywords if k.arg == "type"]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                if EVENT_NAME.fullmatch(arg.value):
                    found.append((node.lineno, "literal", arg.value))
            elif isinstance(arg, ast.JoinedStr):
                parts = [v.value if isinstance(v, ast.Constant) else "*" for v in arg.values]
                found.append((node.lineno, "fstring", "".join(map(str, parts))))
            elif isinstance(arg, ast.Attribute) and _name(arg.value) in ("EventType", "E"):
                found.append((node.lineno, "member", arg.attr))
            elif isinstance(arg, ast.Name) and arg.id == "TENTATIVA":
                found.append((node.lineno, "member", "TENTATIVA_DE_FERRAMENTA_REGISTRADA"))
    return sorted(found)


def _matches_a_member(pattern: str) -> bool:
    rx = re.compile("[a-z_]+".join(re.escape(part) for part in pattern.split("*")))
    return any(rx.fullmatch(t.value) for t in EventType)


def _problems(found: list[tuple[int, str, str]]) -> list[str]:
    values = {t.value for t in EventType}
    bad = []
    for line, kind, name in found:
        if kind == "literal" and name not in values:
            bad.append(f"{line}: {name!r} is not an EventType")
        elif kind == "fstring" and not _matches_a_member(name):
            bad.append(f"{line}: f-string {name!r} matches no EventType")
        elif kind == "member" and name not in EventType.__members__:
            bad.append(f"{line}: EventType.{name} does not exist")
    return bad


def test_every_event_name_emitted_in_backend_is_a_member() -> None:
    problems, sites = [], 0
    for path in sorted(BACKEND.rglob("*.py")):
        found = emitted_names(path.read_text(encoding="utf-8"))
        sites += len(found)
        problems += [f"{path.relative_to(BACKEND.parent)}:{p}" for p in _problems(found)]
    assert problems == []
    assert sites >= 25  # the scan sees the emitters (45 today), not an empty tree


def test_the_scan_catches_a_free_string() -> None:
    source = """
async def f(self, events, tx, gate):
    events.append("made.up", {})
    self.events.append_in(tx, "infra.pr_opened", {})
    await asyncio.to_thread(self.events.append, "also.made_up", {})
    self._emit(None, f"nothing.{gate}", {}, None, None, None)
    self._emit(None, f"artifact.{gate}_verdict", {}, None, None, None)
    self.events.append(EventType.NOT_A_MEMBER, {})
    names.append("docker.sock")
"""
    assert _problems(emitted_names(source)) == [
        "3: 'made.up' is not an EventType",
        "5: 'also.made_up' is not an EventType",
        "6: f-string 'nothing.*' matches no EventType",
        "8: EventType.NOT_A_MEMBER does not exist",
    ]


# Modules already converted to EventType members; a literal there (even a valid one) is a
# regression. Once every emitter is converted this becomes the whole of backend/.
# Every module of the backend: an event type is always named by its member.
CONVERTED = sorted(BACKEND.rglob("*.py"))


@pytest.mark.parametrize("path", CONVERTED, ids=lambda p: str(p.relative_to(BACKEND)))
def test_converted_modules_emit_members_only(path: Path) -> None:
    found = emitted_names(path.read_text(encoding="utf-8"))
    assert [f for f in found if f[1] != "member"] == []
