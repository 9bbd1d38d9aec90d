"""The OpenAPI document is the one contract: every 2xx of every /api operation has a real
schema, and every error the backend raises on purpose maps to an honest status."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Any

import pytest

import backend
from backend.api.app import create_app
from backend.api.errors import CLIENT_FAULT, headers_of, status_of
from backend.exceptions import (
    CadenciaError,
    ConfigError,
    ConflictError,
    ForbiddenError,
    GatewayError,
    NotFoundError,
    PathError,
    ProviderError,
    StorageError,
    UnavailableError,
    ValidationError,
)
from backend.settings import load_settings

# Leaves outside the tree that are about the request, on purpose (and never reach the API
# today: the orchestrator turns a refusal into a ``falhou`` attempt).
CLIENT_CAUSED = {"ToolRefusedError", "GatewayRefusedError"}


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data = tmp_path_factory.mktemp("openapi")
    app = create_app(load_settings(data_dir=data, token="openapi-token"))
    return app.openapi()


def _resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref:
        name = ref.rsplit("/", 1)[-1]
        assert name in spec["components"]["schemas"], f"dangling $ref {ref}"
        return spec["components"]["schemas"][name]  # type: ignore[no-any-return]
    return schema


def _typed(spec: dict[str, Any], schema: dict[str, Any]) -> bool:
    """A schema that says something: a $ref to an object with properties, a typed array of
    such, or a union of them — not ``{}`` and not a free-form ``dict``."""
    schema = _resolve(spec, schema)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return all(_typed(spec, s) for s in schema[key] if s.get("type") != "null")
    if schema.get("type") == "array":
        return _typed(spec, schema.get("items") or {})
    return schema.get("type") == "object" and bool(schema.get("properties"))


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, op)
        for path, ops in spec["paths"].items()
        if path.startswith("/api/")
        for method, op in ops.items()
    ]


def test_every_2xx_of_every_api_operation_has_a_real_schema(spec: dict[str, Any]) -> None:
    operations = _operations(spec)
    assert len(operations) >= 20
    untyped = []
    for method, path, op in operations:
        ok = [s for s in op["responses"] if s.startswith("2")]
        assert ok, f"{method} {path} documents no 2xx response"
        for status in ok:
            content = op["responses"][status].get("content") or {}
            if "text/event-stream" in content:
                item = content["text/event-stream"].get("itemSchema") or {}
                data = item.get("properties", {}).get("data", {}).get("contentSchema", {})
                good = bool(data) and _typed(spec, data)
            else:
                schema = (content.get("application/json") or {}).get("schema") or {}
                good = _typed(spec, schema)
            if not good:
                untyped.append(f"{method} {path} {status}")
    assert untyped == []


def test_errors_are_documented_in_the_one_shape(spec: dict[str, Any]) -> None:
    error = spec["components"]["schemas"]["ErrorOut"]
    assert error["required"] == ["error"]
    for method, path, op in _operations(spec):
        for status in ("401", "502", "503"):
            schema = op["responses"][status]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorOut"}, (method, path, status)


def test_takeover_contract_fields(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    item = schemas["InterruptionItem"]["properties"]
    assert "pedido" not in item
    assert item["entidade"]["enum"] == ["pedidoId", "clienteId"]
    assert item["attempt_count"]["type"] == "integer"
    assert "attempts" not in item
    detail = schemas["InterruptionDetailOut"]["properties"]
    assert detail["attempts"]["items"] == {"$ref": "#/components/schemas/AttemptRecord"}
    resultado = schemas["AttemptRecord"]["properties"]["resultado"]["enum"]
    assert resultado == [
        "executado",
        "bloqueado_por_idempotencia",
        "bloqueado_por_teto",
        "argumentos_invalidos",
        "falhou",
        "resultado_incerto",
    ]


def _all_backend_errors() -> list[type[CadenciaError]]:
    root = Path(backend.__file__).parent
    for info in pkgutil.walk_packages([str(root)], prefix="backend."):
        if ".demo." in info.name or info.name.endswith(".__main__"):
            continue
        importlib.import_module(info.name)
    found: list[type[CadenciaError]] = []
    todo = [CadenciaError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return [c for c in found if c.__module__.startswith("backend.")]


def test_every_backend_error_maps_to_an_honest_status() -> None:
    errors = _all_backend_errors()
    assert len(errors) > 12
    for cls in errors:
        exc = cls("x")
        status = status_of(exc)
        if isinstance(exc, UnavailableError):
            assert status in (502, 503), cls
            assert headers_of(exc) == {"Retry-After": str(cls.retry_after_s)}, cls
        elif isinstance(exc, ConfigError):
            assert (status, headers_of(exc)) == (503, None), cls
        elif isinstance(exc, ForbiddenError):
            assert status == 403, cls
        elif isinstance(exc, NotFoundError | ConflictError | ValidationError | PathError):
            assert 400 <= status < 500, cls
        elif cls is not CadenciaError:
            # A new leaf must pick its side of the tree, or be listed here as the caller's.
            assert cls.__name__ in CLIENT_CAUSED, f"{cls.__module__}.{cls.__name__} is unmapped"
            assert status == CLIENT_FAULT
    assert status_of(GatewayError("x")) == status_of(ProviderError("x")) == 502
    assert status_of(StorageError("x")) == 503
