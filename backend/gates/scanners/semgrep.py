"""semgrep with the rules shipped in ``backend/gates/rules/semgrep`` — one run per gate.

Offline and unsilenceable: no metrics, no version check, no ``nosem``, a local config. The
copy is scanned as one directory with every skip a directory walk would make switched off,
and what semgrep did not read is a blocking finding, not a pass: :func:`command` gives each
flag's reason. A Dockerfile known only by its content gets the Dockerfile rules too
(:func:`rule_configs`). The ``--x-`` flag is not semgrep's stable API, one more reason
semgrep is pinned (:data:`~backend.gates.provision.SEMGREP_VERSION`).
"""

from __future__ import annotations

import fnmatch
import json
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import yaml

from backend.gates.findings import Finding, ScanResult, Severity
from backend.gates.scanners._base import RULES_DIR, ScanContext, ToolFailed, run_tool, tail
from backend.gates.targets import is_dockerfile, is_template

TOOL = "semgrep"
SEMGREP_RULES = RULES_DIR / "semgrep"
_SEVERITY: dict[str, Severity] = {"ERROR": "error", "WARNING": "warning", "INFO": "info"}
MEMORY_BYTES = 8 * 1024**3
"""A backstop only: semgrep-core reserves far more address space than it uses (a one-file
tree needs between 3 and 3.5 GiB, so a tighter limit fails clean trees now and then).
What it may really use per file is bounded by ``--max-memory`` (:data:`MAX_MEMORY_MIB`)."""
MAX_MEMORY_MIB = 1500
"""semgrep's own per-file memory limit: a file past it is an error naming that file (a
blocking finding), not a crash of the whole run."""


def command(
    binary: str, targets: Sequence[str] = (".",), configs: Sequence[str] = (str(SEMGREP_RULES),)
) -> list[str]:
    """The exact command line (the benchmark runs it directly too); the gate scans ``.``.

    Offline and unsilenceable: ``--metrics=off --disable-version-check`` (plus the env
    vars), ``--disable-nosem``, a local ``--config`` directory. The copy is scanned as one
    directory (``.``), never as a list of files on the command line: 60,000 paths do not fit
    in ``ARG_MAX`` ("Argument list too long"). The copy holds exactly the files to scan, and
    what a directory walk would skip is switched off: ``--x-ignore-semgrepignore-files`` (no
    default ``.semgrepignore``, so ``tests/``, ``node_modules/``, ``vendor/`` are scanned;
    the workspace already deleted the PR's own ignore files), ``--no-exclude-binary-files``;
    the copy is no git checkout, so ``.gitignore`` is not honoured either (a test checks all
    three).

    semgrep drops files over 1 MB without a word in its JSON unless told otherwise, so a
    Dockerfile padded with comments would pass: ``--max-target-bytes 0`` lifts the limit,
    and ``--verbose`` makes the JSON list every target semgrep still skipped
    (``paths.skipped``). Each one, like each error about a file, is a blocking finding:
    what semgrep did not read is not a pass.
    """
    config_args = [arg for config in configs for arg in ("--config", config)]
    return [
        binary,
        "scan",
        "--metrics=off",
        "--disable-version-check",
        "--disable-nosem",
        "--json",
        "--verbose",
        "--x-ignore-semgrepignore-files",
        "--no-exclude-binary-files",
        "--max-target-bytes",
        "0",
        "--max-memory",
        str(MAX_MEMORY_MIB),
        *config_args,
        "--",
        *targets,
    ]


def scan(ctx: ScanContext) -> ScanResult | None:
    """Run the shipped rules on every file of the copy; ``None`` when the copy is empty."""
    if not ctx.files:
        return None
    if not ctx.semgrep_bin:
        return ScanResult.skipped(TOOL, ctx.semgrep_missing)
    try:
        with rule_configs(ctx) as configs:
            proc = run_tool(
                command(ctx.semgrep_bin, configs=configs), ctx, memory_bytes=MEMORY_BYTES
            )
        findings = parse(proc.stdout, proc.stderr)
        return ScanResult.from_findings(TOOL, [_template_note(ctx, f) for f in findings])
    except ToolFailed as exc:
        return ScanResult.skipped(TOOL, str(exc))


def _template_note(ctx: ScanContext, finding: Finding) -> Finding:
    """A parse error on a Helm/Go template is a note: it is not YAML until rendered (the
    Kubernetes check says it was not checked)."""
    if finding.rule != "semgrep-parse-error" or not is_template(ctx.root, finding.file):
        return finding
    why = "a Go template (Helm), not YAML until rendered: semgrep's YAML rules did not read it"
    return replace(finding, severity="info", message=why)


@contextmanager
def rule_configs(ctx: ScanContext) -> Iterator[list[str]]:
    """The ``--config`` paths of this run: the shipped rules directory, or, when some
    Dockerfile is known only by its content, the shipped files with every rule meant for
    Dockerfiles (its ``include`` matches the name ``Dockerfile``) also including those.

    semgrep picks a rule's files by name (``paths: include``), and the Dockerfile rules list
    every name :func:`~backend.gates.targets.is_dockerfile` accepts. A Dockerfile the gate
    recognises only by its content (``build/image.def`` starting with ``FROM``) gets those
    rules through the rewritten copies, written outside the scanned copy (never scanned
    themselves).
    """
    by_content = [rel for rel in ctx.dockerfiles if not is_dockerfile(rel)]
    if not by_content:
        yield [str(SEMGREP_RULES)]
        return
    extra = [_literal_glob(rel) for rel in by_content]
    with tempfile.TemporaryDirectory(prefix="cadencia-semgrep-rules-") as tmp:
        configs = []
        for shipped in sorted(SEMGREP_RULES.glob("*.yaml")):
            document = yaml.safe_load(shipped.read_text(encoding="utf-8"))
            changed = False
            for rule in document["rules"]:
                include = rule.get("paths", {}).get("include")
                if include and any(fnmatch.fnmatchcase("Dockerfile", g) for g in include):
                    rule["paths"]["include"] = [*include, *extra]
                    changed = True
            if not changed:
                configs.append(str(shipped))
                continue
            rewritten = Path(tmp) / shipped.name
            rewritten.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
            configs.append(str(rewritten))
        yield configs


def _literal_glob(rel: str) -> str:
    """``rel`` as a glob matching only itself, anchored at the copy's root (semgrep's globs
    escape with a backslash, as gitignore's do; a ``[*]`` class matches nothing there)."""
    escaped = "".join(f"\\{c}" if c in "\\*?[]" else c for c in rel)
    return f"/{escaped}"


def parse(stdout: str, stderr: str = "") -> list[Finding]:
    """semgrep's ``--json`` results to findings.

    A target semgrep could not parse, or skipped (``paths.skipped``), becomes a warning
    finding (the PR's file cannot be vouched for); any other semgrep error means the run
    cannot be trusted.

    Raises:
        ToolFailed: no JSON, or an error that is not about one target file.
    """
    try:
        data = json.loads(stdout)
        results = data["results"]
        errors = data.get("errors", [])
        skipped = (data.get("paths") or {}).get("skipped") or []
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ToolFailed(f"semgrep gave no JSON: {tail(stderr or stdout)}") from exc
    findings = [
        Finding(
            file=str(r["path"]).removeprefix("./"),
            line=r.get("start", {}).get("line"),
            tool=TOOL,
            rule=str(r["check_id"]).rsplit(".", 1)[-1],
            severity=_SEVERITY.get(str(r.get("extra", {}).get("severity", "")).upper(), "warning"),
            message=" ".join(str(r.get("extra", {}).get("message", "")).split()),
        )
        for r in results
    ]
    for error in errors:
        path = error.get("path")
        if path:
            findings.append(
                Finding(
                    file=str(path).removeprefix("./"),
                    line=_error_line(error),
                    tool=TOOL,
                    rule="semgrep-parse-error",
                    severity="warning",
                    message=f"semgrep could not analyse this file: {error.get('type', 'error')}",
                )
            )
        elif str(error.get("level", "")).lower() == "error":
            raise ToolFailed(f"semgrep error: {error.get('message', error)}")
    reported = {f.file for f in findings if f.rule == "semgrep-parse-error"}
    for target in skipped:
        if not isinstance(target, dict) or not target.get("path"):
            raise ToolFailed(f"semgrep skipped a target it does not name: {target!r}")
        file = str(target["path"]).removeprefix("./")
        if file in reported:
            continue  # its error above already says why
        reported.add(file)
        findings.append(
            Finding(
                file=file,
                line=None,
                tool=TOOL,
                rule="semgrep-skipped-target",
                severity="warning",
                message=f"semgrep did not scan this file ({target.get('reason', 'no reason')})",
            )
        )
    return findings


def _error_line(error: dict[str, object]) -> int | None:
    spans = error.get("spans")
    if isinstance(spans, list) and spans and isinstance(spans[0], dict):
        start = spans[0].get("start")
        if isinstance(start, dict) and isinstance(start.get("line"), int):
            return int(start["line"])
    return None
