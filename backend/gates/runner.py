"""The gate runner: deterministic QA and SecOps gates over a temporary copy, no LLM.

``run_gates`` runs both gates (the CLI), ``run_qa``/``run_secops`` one each (the product
runs QA first and SecOps only after a QA pass). Scanners of a gate run in parallel
threads; the built-in checks that parse the PR run in a sandboxed child process
(:mod:`backend.gates.sandbox`). A scanner that should have run but could not makes its gate
``skipped``, and a skipped gate is not a pass (:class:`GateResult`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from backend.gates.findings import Finding, ScanResult, ScanStatus, with_fingerprints

# resolve_semgrep is re-exported: the tests and the benchmarks import it from here.
from backend.gates.provision import locate_semgrep, resolve_semgrep  # noqa: F401
from backend.gates.sandbox import sandboxed
from backend.gates.scanners import (
    compose,
    detect_secrets,
    dockerfile,
    hadolint,
    iam_floor,
    kubernetes,
    parliament,
    regex_secrets,
    semgrep,
    terraform,
    zizmor,
)
from backend.gates.scanners._base import DEFAULT_TIMEOUT_S, ScanContext
from backend.gates.scanners.secret_noise import merge_duplicates
from backend.gates.state import GateName
from backend.gates.workspace import TOOL as WORKSPACE
from backend.gates.workspace import Workspace, prepared_copy
from backend.settings import Settings

log = logging.getLogger(__name__)

FILES_PER_TIMEOUT = 2_000
"""A scanner's ``timeout_s`` covers this many files; a larger copy gets proportionally more."""
Verdict = Literal["pass", "changes_requested"]
Scanner = Callable[[ScanContext], ScanResult | None]

GATES: dict[GateName, tuple[tuple[str, Scanner], ...]] = {
    "qa": (
        (hadolint.TOOL, hadolint.scan),
        (dockerfile.TOOL, sandboxed(dockerfile.TOOL)),
        (compose.TOOL, sandboxed(compose.TOOL)),
        (kubernetes.TOOL, sandboxed(kubernetes.TOOL)),
        (terraform.TOOL, terraform.scan),
    ),
    "secops": (
        (detect_secrets.TOOL, detect_secrets.scan),
        (regex_secrets.TOOL, regex_secrets.scan),
        (semgrep.TOOL, semgrep.scan),
        (zizmor.TOOL, zizmor.scan),
        (parliament.TOOL, parliament.scan),
        (iam_floor.TOOL, sandboxed(iam_floor.TOOL)),
    ),
}


@dataclass(frozen=True)
class GateResult:
    """One gate's outcome.

    Skipped scanners: a scanner that should have run but could not (missing binary, timeout,
    untrustworthy output) is listed under its gate's ``skipped`` and makes the gate
    ``skipped`` unless another scanner already failed it. A skipped gate is not a pass, so the
    verdict is ``changes_requested``: the gate fails closed, and the JSON says which scanner
    was missing instead of passing in silence. A scanner with nothing to look at (no
    Dockerfile, no Terraform, no IAM policy) is simply not run.

    Attributes:
        gate: ``qa`` or ``secops``.
        scans: one result per scanner that had something to look at.
    """

    gate: GateName
    scans: tuple[ScanResult, ...]

    @property
    def status(self) -> ScanStatus:
        """``fail`` if any scanner failed, else ``skipped`` if any was skipped, else ``pass``."""
        statuses = {s.status for s in self.scans}
        if "fail" in statuses:
            return "fail"
        if "skipped" in statuses:
            return "skipped"
        return "pass"

    @property
    def passed(self) -> bool:
        """True only for a real pass: the verdict to record in the gate state machine."""
        return self.status == "pass"

    @property
    def findings(self) -> list[Finding]:
        """Every finding of the gate, ordered by file, line, tool, rule."""
        return sorted((f for s in self.scans for f in s.findings), key=Finding.sort_key)

    @property
    def skipped(self) -> list[str]:
        """Names of the scanners that could not run."""
        return [s.tool for s in self.scans if s.status == "skipped"]

    @property
    def skipped_reasons(self) -> dict[str, str]:
        """Why each skipped scanner could not run (not installed, timed out...)."""
        return {s.tool: s.detail or "could not run" for s in self.scans if s.status == "skipped"}

    def to_json(self) -> dict[str, object]:
        """The gate object of ``cadencia gate --json`` (plus the skipped scanners and why)."""
        return {
            "gate": self.gate,
            "status": self.status,
            "findings": [f.to_json() for f in self.findings],
            "skipped": self.skipped,
            "skipped_reasons": self.skipped_reasons,
        }


@dataclass(frozen=True)
class GateReport:
    """Both gates' outcomes for one PR or directory.

    Attributes:
        gates: results in order (``qa`` then ``secops``).
        removed: suppression files the PR brought that were deleted before scanning.
        ignored: symlinks/special files of a scanned directory that were not copied.
    """

    gates: tuple[GateResult, ...]
    removed: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()

    @property
    def verdict(self) -> Verdict:
        """``pass`` only when every gate passed (a skipped gate is not a pass)."""
        return "pass" if self.gates and all(g.passed for g in self.gates) else "changes_requested"

    @property
    def findings(self) -> list[Finding]:
        """Every finding of every gate (what goes to the author's ``correct(findings)``)."""
        return [f for g in self.gates for f in g.findings]

    @property
    def complete(self) -> bool:
        """True when every scanner that had something to look at ran (none skipped)."""
        return not any(g.skipped for g in self.gates)

    def gate(self, name: GateName) -> GateResult:
        """The result of one gate.

        Raises:
            KeyError: that gate was not run.
        """
        for result in self.gates:
            if result.gate == name:
                return result
        raise KeyError(name)

    def to_json(self) -> dict[str, object]:
        """The ``cadencia gate --json`` document, as a JSON-ready dict."""
        return {
            "verdict": self.verdict,
            "complete": self.complete,
            "gates": [g.to_json() for g in self.gates],
        }


def run_gates(
    source: Mapping[str, str] | Path,
    settings: Settings | None = None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> GateReport:
    """Run the QA and SecOps gates on a PR payload or a directory.

    Scanners of a gate run in parallel threads; each is a subprocess or pure Python, so the
    GIL is not the limit. The built-in checks that parse the PR (compose, Dockerfile, IAM
    floor) run in a child process under CPU, memory and output limits
    (:mod:`backend.gates.sandbox`).

    Args:
        source: ``{relative path: text}`` of the PR's files, or a directory.
        settings: for the semgrep location; read from the environment when omitted.
        timeout_s: limit for each scanner subprocess, per ``FILES_PER_TIMEOUT`` files.

    Raises:
        PathError: a payload path is absolute, has ``..`` or is inside ``.git/``
            (nothing is written), or the directory does not exist.
    """
    return _run(source, ("qa", "secops"), settings, timeout_s)


def run_qa(
    source: Mapping[str, str] | Path,
    settings: Settings | None = None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> GateResult:
    """Run only the QA gate (hadolint, Dockerfile and compose checks, terraform fmt)."""
    return _run(source, ("qa",), settings, timeout_s).gates[0]


def run_secops(
    source: Mapping[str, str] | Path,
    settings: Settings | None = None,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> GateResult:
    """Run only the SecOps gate (detect-secrets, regex floor, semgrep, parliament, IAM floor)."""
    return _run(source, ("secops",), settings, timeout_s).gates[0]


def _run(
    source: Mapping[str, str] | Path,
    gates: Sequence[GateName],
    settings: Settings | None,
    timeout_s: float,
) -> GateReport:
    semgrep = locate_semgrep(settings) if "secops" in gates else None
    with prepared_copy(source) as ws:
        ctx = ScanContext(
            root=ws.root,
            files=ws.files,
            timeout_s=scaled_timeout(timeout_s, len(ws.files)),
            semgrep_bin=semgrep.path if semgrep else None,
            semgrep_missing=(semgrep.reason if semgrep else None) or "semgrep not installed",
        )
        jobs = [(gate, name, scanner) for gate in gates for name, scanner in GATES[gate]]
        with ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="gate") as pool:
            futures = [
                (gate, pool.submit(_safe_scan, name, scanner, ctx)) for gate, name, scanner in jobs
            ]
            outcomes = [(gate, _stamped(future.result(), ws.root)) for gate, future in futures]
        outcomes = merge_duplicates(outcomes)  # one finding per secret across scanners
        if ws.findings:  # symlinks and encodings: reported once, in the last gate run
            found = ScanResult.from_findings(WORKSPACE, list(ws.findings))
            outcomes.append((gates[-1], _stamped(found, ws.root)))
        results = tuple(
            GateResult(
                gate=gate, scans=tuple(r for g, r in outcomes if g == gate and r is not None)
            )
            for gate in gates
        )
        return _report(results, ws)


def _stamped(result: ScanResult | None, root: Path) -> ScanResult | None:
    """Findings get their stable ids (what a waiver names) while the copy still exists."""
    return None if result is None else with_fingerprints(result, root)


def scaled_timeout(timeout_s: float, files: int) -> float:
    """Each scanner's limit for a copy of ``files`` files: ``timeout_s`` per
    ``FILES_PER_TIMEOUT`` files. A fixed limit made every tree above a few thousand files
    fail closed (detect-secrets needs ~20 ms a file per core), so a monorepo PR could never
    pass; the limit still catches a hung scanner."""
    return timeout_s * max(1.0, files / FILES_PER_TIMEOUT)


def _safe_scan(name: str, scanner: Scanner, ctx: ScanContext) -> ScanResult | None:
    """A bug in one adapter must not turn into a pass, nor hide the other scanners."""
    try:
        return scanner(ctx)
    except Exception as exc:
        log.exception("scanner %s crashed", name)
        return ScanResult.skipped(name, f"{name} crashed: {exc}")


def _report(results: tuple[GateResult, ...], ws: Workspace) -> GateReport:
    return GateReport(gates=results, removed=ws.removed, ignored=ws.ignored)
