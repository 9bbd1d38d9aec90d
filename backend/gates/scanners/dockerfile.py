"""Built-in Dockerfile checks (``dockerfile-parse``): they run even without hadolint.

Checks: the final image runs as root (its effective user, resolved across stages,
``ARG``/``ENV`` and known non-root base images: :mod:`.dockerfile_user`), base images
on ``latest`` or with no tag/digest at all, ``ADD`` of a remote URL that neither
``--checksum`` nor a later ``RUN`` verifies, and ``RUN`` scripts that use a download nothing
verified or pipe without ``pipefail`` where a failure would be hidden (:mod:`.dockerfile_run`).
"""

from __future__ import annotations

import io
import re

from dockerfile_parse import DockerfileParser

from backend.gates.findings import Finding, ScanResult
from backend.gates.scanners._base import ScanContext
from backend.gates.scanners.dockerfile_run import PIPEFAIL, Stage, check_run, set_shell
from backend.gates.scanners.dockerfile_user import blank_heredocs, final_user

TOOL = "dockerfile"
_HEREDOC = re.compile(r"<<(-?)([\"']?)([A-Za-z_][\w]*)\2")
_SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh"})
_URL = re.compile(r"^(https?|ftp)://|^git@", re.IGNORECASE)


def targets(ctx: ScanContext) -> list[str]:
    """The Dockerfiles of the copy, by name or content."""
    return ctx.dockerfiles


def scan(ctx: ScanContext) -> ScanResult | None:
    """Check every Dockerfile of the copy; ``None`` when there is none.

    It parses the PR's Dockerfiles: the gate runs it in :mod:`backend.gates.sandbox`.
    """
    files = targets(ctx)
    if not files:
        return None
    findings: list[Finding] = []
    for rel in files:
        ctx.reading(rel)
        text = (ctx.root / rel).read_text(encoding="utf-8", errors="replace")
        findings.extend(check_dockerfile(text, rel))
    return ScanResult.from_findings(TOOL, findings)


def check_dockerfile(text: str, file: str = "Dockerfile") -> list[Finding]:
    """Run the built-in checks on one Dockerfile's text."""
    # heredoc bodies are content, not instructions (a "USER 1000" in one is no USER)
    parser = DockerfileParser(fileobj=io.BytesIO(blank_heredocs(text).encode("utf-8")))
    structure = parser.structure
    froms = [item for item in structure if item["instruction"] == "FROM"]
    if not froms:
        return [_finding(file, 1, "dockerfile-no-from", "error", "no FROM instruction")]
    findings: list[Finding] = []
    resolved = parser.parent_images  # FROM images with ARG defaults substituted
    aliases: set[str] = set()
    for item, image in zip(froms, resolved, strict=False):
        line = item["startline"] + 1
        words = item["value"].split()
        alias = words[-1].lower() if len(words) >= 3 and words[-2].lower() == "as" else None
        findings.extend(_check_image(image, aliases, file, line))
        if alias:
            aliases.add(alias)
    findings.extend(_check_user(structure, froms[-1]["startline"], file))
    findings.extend(_check_steps(structure, file, text.splitlines()))
    return findings


def _check_image(image: str, aliases: set[str], file: str, line: int) -> list[Finding]:
    ref = image.strip()
    if not ref or ref.lower() == "scratch" or ref.lower() in aliases or "$" in ref:
        return []  # an earlier stage, the empty image, or an unresolved ARG (hadolint's job)
    if "@" in ref:
        return []  # pinned by digest
    last = ref.rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else None
    if tag is None:
        return [
            _finding(
                file,
                line,
                "dockerfile-untagged-image",
                "error",
                f"base image {ref!r} has no tag: it floats like 'latest'; pin a version",
            )
        ]
    if tag.lower() == "latest":
        return [
            _finding(
                file,
                line,
                "dockerfile-latest-tag",
                "error",
                f"base image {ref!r} uses 'latest'; pin a version",
            )
        ]
    return []


def _check_user(structure: list[dict[str, object]], final_from: object, file: str) -> list[Finding]:
    user = final_user(structure)
    if user.who == "non-root":
        return []
    if user.line is None:
        base = f"its base image {user.via!r} runs" if user.via else "it runs"
        return [
            _finding(
                file,
                _int(final_from) + 1,
                "dockerfile-no-user",
                "error",
                f"final stage has no USER ({base} as root by default): the container runs "
                "as root; add a non-root numeric USER",
            )
        ]
    spelled = repr(user.spelled)
    if user.value is not None and user.value != user.spelled:
        spelled += f" (= {user.value!r})"
    inherited = f", inherited from stage {user.via!r}" if user.via else ""
    if user.who == "root":
        return [
            _finding(
                file,
                user.line,
                "dockerfile-root-user",
                "error",
                f"final USER is {spelled}{inherited}: the container runs as root; "
                "use a non-root numeric USER",
            )
        ]
    return [
        _finding(
            file,
            user.line,
            "dockerfile-user-unresolved",
            "error",
            f"final USER {spelled}{inherited} uses a variable with no value: who the "
            "container runs as cannot be told; give the ARG/ENV a non-root default",
        )
    ]


def _remote_adds(value: str) -> list[tuple[str, str]]:
    """``(url, destination)`` of an ``ADD`` that downloads with no ``--checksum``."""
    words = value.split()
    if any(w.startswith("--checksum=") for w in words):
        return []  # BuildKit verifies the download
    operands = [w.strip('[]",') for w in words if not w.startswith("--")]
    if len(operands) < 2:
        return []
    dest = operands[-1]
    return [
        (src, dest + src.rstrip("/").rsplit("/", 1)[-1] if dest.endswith("/") else dest)
        for src in operands[:-1]
        if _URL.match(src)
    ]


def _check_steps(structure: list[dict[str, object]], file: str, lines: list[str]) -> list[Finding]:
    """``RUN`` scripts (heredoc bodies included, from the unblanked ``lines``) and remote
    ``ADD``s, stage by stage (:mod:`.dockerfile_run`).

    A remote ``ADD`` with no ``--checksum`` is flagged unless a later ``RUN`` of its stage
    verifies the file (``gpg --verify /tini.asc /tini``, a pinned checksum).
    """
    findings: list[Finding] = []
    stage = Stage()
    added: list[tuple[str, str, int]] = []
    for item in [*structure, {"instruction": "FROM", "value": "", "startline": 0}]:
        instruction, value = item["instruction"], str(item["value"])
        line = _int(item["startline"]) + 1
        if instruction == "FROM":
            findings.extend(
                _finding(
                    file,
                    at,
                    "dockerfile-add-url",
                    "error",
                    f"ADD of remote URL {url} with no --checksum and nothing verifying "
                    f"{dest} after it: add --checksum=sha256:<digest> or use COPY",
                )
                for url, dest, at in added
                if not stage.is_verified(dest)
            )
            stage, added = Stage(), []
        elif instruction == "SHELL":
            set_shell(stage, value)
        elif instruction == "ADD":
            for url, dest in _remote_adds(value):
                stage.fetched(dest)
                added.append((url, dest, line))
        elif instruction == "RUN":
            scripts = [value, *_heredoc_scripts(value, lines, _int(item["endline"]) + 1)]
            problems = [p for script in scripts for p in check_run(script, stage)]
            for rule, message in dict.fromkeys(problems):
                severity = "warning" if rule == PIPEFAIL else "error"
                findings.append(_finding(file, line, rule, severity, message))
    return findings


def _heredoc_scripts(value: str, lines: list[str], start: int) -> list[str]:
    """The bodies of a ``RUN``'s heredocs that a shell runs (``RUN <<EOF``, ``RUN bash
    <<EOF``), read from ``lines`` at index ``start``; a ``python3 <<EOF`` body is data."""
    scripts = []
    for match in _HEREDOC.finditer(value):
        strip, word = match.group(1) == "-", match.group(3)
        body = []
        while start < len(lines):
            line = lines[start]
            start += 1
            if (line.lstrip("\t") if strip else line) == word:
                break
            body.append(line)
        before = value[: match.start()].split()
        while before and before[0].startswith("--"):
            before.pop(0)  # RUN --mount=... <<EOF
        if not before or before[0].rsplit("/", 1)[-1] in _SHELLS:
            scripts.append("\n".join(body))
    return scripts


def _int(value: object) -> int:
    return int(value)  # type: ignore[call-overload]


def _finding(file: str, line: int, rule: str, severity: str, message: str) -> Finding:
    return Finding(
        file=file,
        line=line,
        tool=TOOL,
        rule=rule,
        severity=severity,  # type: ignore[arg-type]
        message=message,
    )
