"""Module map schema and manifest detection on the sample repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.exceptions import ValidationError
from backend.module_map import load_module_map, parse_module_map
from backend.planner.detect import detect_modules, inspect_module

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "repos"


def _map(**module: object) -> str:
    base = {
        "name": "api",
        "path": "services/api",
        "language": "python",
        "kind": "service",
        "port": 8000,
    }
    return json.dumps({"modules": [{**base, **module}]})


def test_valid_map_parses() -> None:
    modules = parse_module_map(_map()).modules
    assert [(m.name, m.path, m.port) for m in modules] == [("api", "services/api", 8000)]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("path", "/srv/api", "relative"),
        ("path", "services/../../etc", r"'\.\.'"),
        ("path", ".git/hooks", r"\.git"),
        ("path", "a\\b", "backslash"),
        ("name", "Api", "lowercase"),
        ("name", "-api", "lowercase"),
        ("name", "api_v2", "lowercase"),
        ("language", "cobol", "language"),
        ("port", 70000, "port"),
        ("port", None, "no port"),
    ],
)
def test_invalid_map_is_rejected_with_field(field: str, value: object, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        parse_module_map(_map(**{field: value}))


def test_duplicate_names_rejected() -> None:
    text = json.dumps(
        {
            "modules": [
                {"name": "a", "path": "x", "language": "go", "kind": "job"},
                {"name": "a", "path": "y", "language": "go", "kind": "job"},
            ]
        }
    )
    with pytest.raises(ValidationError, match="unique"):
        parse_module_map(text)


def test_load_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="cannot read module map"):
        load_module_map(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValidationError, match=r"bad\.json: not valid JSON \(line 1"):
        load_module_map(bad)


@pytest.mark.parametrize(
    ("sample", "expected"),
    [
        ("python-api", [(".", "python", "service", 8000, "app.main:app")]),
        ("node-web", [(".", "node", "service", 3000, "src/server.js")]),
        ("go-svc", [(".", "go", "service", 8080, ".")]),
        (
            "java-app",
            [
                (
                    ".",
                    "java",
                    "service",
                    8081,
                    "src/main/java/com/example/orders/OrdersApplication.java",
                )
            ],
        ),
        (
            "multi",
            [
                ("libs/shared", "python", "library", None, None),
                ("services/api", "python", "service", 5001, "app.py"),
                ("services/worker", "go", "job", None, "."),
                ("web", "node", "service", 8090, "server.mjs"),
            ],
        ),
    ],
)
def test_detection_on_samples(sample: str, expected: list[tuple[object, ...]]) -> None:
    modules = detect_modules(SAMPLES / sample).modules
    assert [(m.path, m.language, m.kind, m.port, m.entry) for m in modules] == expected


def test_detection_facts_lockfiles_and_artifacts() -> None:
    assert inspect_module(SAMPLES / "node-web", "node").lockfile == "package-lock.json"
    assert inspect_module(SAMPLES / "multi/web", "node").lockfile == "yarn.lock"
    java = inspect_module(SAMPLES / "java-app", "java")
    assert (java.artifact, java.language_version) == ("orders-service-0.0.1.jar", "17")
    python = inspect_module(SAMPLES / "python-api", "python")
    assert python.has_requirements
    assert python.has_pyproject
    assert "fastapi" in python.deps


def test_detection_skips_vendored_and_names_uniquely(tmp_path: Path) -> None:
    (tmp_path / "node_modules/dep").mkdir(parents=True)
    (tmp_path / "node_modules/dep/package.json").write_text("{}")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv/pyproject.toml").write_text("")
    for d in ("a/svc", "b/svc"):
        (tmp_path / d).mkdir(parents=True)
        (tmp_path / d / "go.mod").write_text("module x\n\ngo 1.22\n")
    (tmp_path / "b/svc/main.go").write_text(
        'package main\n\nimport "net/http"\n\nfunc main() {\n'
        '\tsrv := &http.Server{Addr: ":9090"}\n\t_ = srv.ListenAndServe()\n}\n'
    )
    (tmp_path / "rs").mkdir()
    (tmp_path / "rs/Cargo.toml").write_text('[package]\nname = "edge"\nversion = "0.1.0"\n')
    (tmp_path / "rs/src").mkdir()
    (tmp_path / "rs/src/main.rs").write_text(
        'fn main() { let _l = std::net::TcpListener::bind("0.0.0.0:7000").unwrap(); }\n'
    )
    modules = detect_modules(tmp_path).modules
    assert [(m.name, m.path, m.kind, m.port) for m in modules] == [
        ("svc", "a/svc", "library", None),
        ("svc-2", "b/svc", "service", 9090),
        ("rs", "rs", "service", 7000),
    ]
