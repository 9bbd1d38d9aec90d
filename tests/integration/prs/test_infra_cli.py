"""``cadencia infra plan``: writes the proposal, and exits 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.cli import main

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "repos"


def _err(capsys: pytest.CaptureFixture[str]) -> str:
    return " ".join(capsys.readouterr().err.split())  # rich wraps long lines


def test_plan_writes_files_and_prints_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["infra", "plan", str(SAMPLES / "java-app"), "--out", str(out)]) == 0
    assert "EXPOSE 8081" in (out / "Dockerfile").read_text()
    assert (out / "compose.yaml").is_file()
    assert (out / ".github/workflows/ci.yml").is_file()
    printed = capsys.readouterr().out
    assert "java-app" in printed
    assert "8081" in printed
    assert "wrote 4 files" in printed


def test_plan_with_module_map(tmp_path: Path) -> None:
    module_map = tmp_path / "map.json"
    module_map.write_text(
        json.dumps(
            {
                "modules": [
                    {
                        "name": "web",
                        "path": ".",
                        "language": "node",
                        "kind": "service",
                        "port": 4000,
                    }
                ]
            }
        )
    )
    out = tmp_path / "out"
    assert (
        main(
            [
                "infra",
                "plan",
                str(SAMPLES / "node-web"),
                "--module-map",
                str(module_map),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert '"127.0.0.1:4000:4000"' in (out / "compose.yaml").read_text()


def test_bad_inputs_exit_2_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["infra", "plan", str(tmp_path / "missing"), "--out", str(out)]) == 2
    assert "does not exist" in _err(capsys)

    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert (
        main(
            ["infra", "plan", str(SAMPLES / "go-svc"), "--module-map", str(bad), "--out", str(out)]
        )
        == 2
    )
    assert "not valid JSON" in _err(capsys)

    bad.write_text(
        json.dumps({"modules": [{"name": "x", "path": "../up", "language": "go", "kind": "job"}]})
    )
    assert (
        main(
            ["infra", "plan", str(SAMPLES / "go-svc"), "--module-map", str(bad), "--out", str(out)]
        )
        == 2
    )
    assert "must not contain '..'" in _err(capsys)
    assert not out.exists()

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "go.mod").write_text("module x\n\ngo 1.22\n")
    assert main(["infra", "plan", str(repo), "--out", str(repo / ".git" / "hooks")]) == 2
    assert ".git" in _err(capsys)
    assert list((repo / ".git").iterdir()) == []


PLAN_REPOS = Path(__file__).resolve().parents[2] / "fixtures" / "plan_repos"


def test_out_refuses_to_overwrite_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    (out / ".github").mkdir(parents=True)
    (out / "Dockerfile").write_text("FROM scratch\n# hand-written\n")
    before = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))

    assert main(["infra", "plan", str(SAMPLES / "go-svc"), "--out", str(out)]) == 2
    err = _err(capsys)
    assert "already holds 1 of the proposed files (Dockerfile)" in err
    assert "nothing written" in err
    assert "--force" in err
    assert (out / "Dockerfile").read_text() == "FROM scratch\n# hand-written\n"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == before

    assert main(["infra", "plan", str(SAMPLES / "go-svc"), "--out", str(out), "--force"]) == 0
    assert "EXPOSE 8080" in (out / "Dockerfile").read_text()


def test_summary_names_start_runtime_host_port_and_skipped_modules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["infra", "plan", str(PLAN_REPOS / "polyglot"), "--out", str(tmp_path)]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "port 8000 is taken on the host: published on 8001" in printed
    assert "not planned: legacy/Gemfile: ruby is not supported by the planner" in printed
    assert "not planned: billing/composer.json: php is not supported" in printed
