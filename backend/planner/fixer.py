"""``correct()``: fix, in the proposed files, what the gate findings name.

Findings are ``cadencia gate --json``'s
``{"tool", "rule", "file", "line", "severity", "message"}``. Each finding is routed by its
file kind (Dockerfile, compose, workflow, anything else) and by keywords of its rule id and
message, so hadolint codes (``DL3007``), built-in check ids and semgrep rule ids all reach
the same fixer. A finding no fixer understands leaves the
file as it was: the next gate run reports it again and the correction limit applies.
"""

from __future__ import annotations

import re
import shlex
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import yaml

from backend.gates.scanners.compose import exposes_socket, host_path
from backend.gates.targets import is_compose, is_dockerfile, looks_like_compose
from backend.planner.dockerfiles import PINNED_BY_REPOSITORY, RUNTIME_UID

Finding = dict[str, object]

_AWS_KEY = re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY-----")
_ASSIGN = re.compile(
    r"^(?P<lead>\s*(?:-\s*)?(?:ENV\s+|ARG\s+|export\s+)?)"
    r"(?P<key>[A-Za-z_][A-Za-z0-9_]*)(?P<sep>\s*[=:]\s*|\s+)(?P<value>.+?)\s*$"
)


def correct(files: dict[str, str], findings: list[Finding]) -> dict[str, str]:
    """Return a copy of ``files`` with what ``findings`` name fixed.

    Args:
        files: the proposal, repository-relative path → content.
        findings: gate findings; ``file`` is matched against the proposal's paths.

    Returns:
        The corrected proposal (files not named by any finding are unchanged).
    """
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        path = _match_path(str(finding.get("file") or ""), files)
        if path is not None:
            by_file[path].append(finding)
    fixed = dict(files)
    for path, named in by_file.items():
        text = _fix_secrets(path, fixed[path], [f for f in named if _is_secret(f)])
        keys = {_key(f) for f in named if not _is_secret(f)}
        if _is_dockerfile(path):
            text = _fix_dockerfile(text, keys)
        elif _is_compose(path, text):
            text = _fix_compose(text, keys)
        elif _is_workflow(path):
            text = _fix_workflow(text, keys)
        fixed[path] = text
    return fixed


# --- routing ----------------------------------------------------------------------------


def _match_path(name: str, files: dict[str, str]) -> str | None:
    name = name.replace("\\", "/").lstrip("./") if name not in files else name
    if name in files:
        return name
    # Scanners report paths under their temporary copy: match the longest proposal suffix.
    candidates = [p for p in files if name.endswith("/" + p)]
    return max(candidates, key=len) if candidates else None


def _key(finding: Finding) -> str:
    return f"{finding.get('rule', '')} {finding.get('message', '')}".lower()


def _is_secret(finding: Finding) -> bool:
    # Only the tool and the rule id decide: messages of other rules mention "secrets" too
    # (e.g. why pull_request_target is dangerous).
    tool = str(finding.get("tool", "")).lower()
    rule = str(finding.get("rule", "")).lower()
    return tool in {"detect-secrets", "secret-regex", "gitleaks", "secrets"} or any(
        word in rule
        for word in (
            "secret",
            "credential",
            "private-key",
            "private key",
            "password",
            "token",
            "aws-access-key",
        )
    )


def _is_dockerfile(path: str) -> bool:
    return is_dockerfile(path)  # the gate's own rule, so a flagged Dockerfile is corrected


def _is_compose(path: str, text: str) -> bool:
    # the gate's own rule (by name, or by content whatever the name): what it checked is fixed
    return is_compose(path) or (
        path.lower().endswith((".yml", ".yaml")) and looks_like_compose(text)
    )


def _is_workflow(path: str) -> bool:
    return path.startswith(".github/workflows/") and path.endswith((".yml", ".yaml"))


def _any(keys: set[str], *words: str) -> bool:
    return any(word in key for key in keys for word in words)


# --- secrets ----------------------------------------------------------------------------


def _fix_secrets(path: str, text: str, findings: list[Finding]) -> str:
    if not findings:
        return text
    lines = text.split("\n")
    numbers = sorted(
        {int(str(f["line"])) for f in findings if str(f.get("line") or "").isdigit()}, reverse=True
    )
    for number in numbers:
        if 1 <= number <= len(lines):
            _scrub_line(path, lines, number - 1)
    # Floor for findings whose line moved or was not given: known secret shapes anywhere.
    out: list[str] = []
    in_pem = False
    for line in lines:
        if _PEM_BEGIN.search(line):
            in_pem = True
        if in_pem:
            in_pem = not _PEM_END.search(line)
            continue
        if _AWS_KEY.search(line):
            scratch = [line]
            _scrub_line(path, scratch, 0)
            line = scratch[0] if not _AWS_KEY.search(scratch[0]) else _AWS_KEY.sub("", line)
        out.append(line)
    return "\n".join(out)


def _scrub_line(path: str, lines: list[str], index: int) -> None:
    """Replace a secret at ``lines[index]`` with a reference to where it must come from."""
    line = lines[index]
    if _PEM_BEGIN.search(line):
        end = next((j for j in range(index, len(lines)) if _PEM_END.search(lines[j])), index)
        del lines[index : end + 1]
        return
    m = _ASSIGN.match(line)
    if m is None:
        lines[index] = ""
        return
    key, lead = m.group("key"), m.group("lead")
    if _is_dockerfile(path):
        # Images must not carry secrets at all: they are provided at run time.
        lines[index] = f"# secret {key} removed from the image; provide it at run time"
    elif _is_workflow(path):
        lines[index] = f"{lead}{key}: ${{{{ secrets.{key} }}}}"
    elif _is_compose(path, "\n".join(lines)):
        sep = "=" if "=" in m.group("sep") else ": "
        lines[index] = f"{lead}{key}{sep}${{{key}:?set {key} in the environment}}"
    else:
        lines[index] = f"{lead}{key}{m.group('sep')}"


# --- Dockerfile -------------------------------------------------------------------------


def _fix_dockerfile(text: str, keys: set[str]) -> str:
    fixers: list[tuple[tuple[str, ...], Callable[[str], str]]] = [
        (("dl3006", "dl3007", "latest", "untagged", "unpinned", "tag"), _pin_images),
        (("dl3020", "add-url", "add "), _fix_add),
        (("dl3042", "no-cache-dir"), _pip_no_cache),
        (("dl3015", "no-install-recommends"), _apt_no_recommends),
        (("dl3009", "apt lists", "apt/lists"), _apt_cleanup),
        (("dl3025", "json"), _json_cmd),
        (("dl3002", "dl3004", "user", "root"), _ensure_user),
    ]
    for words, fixer in fixers:
        if _any(keys, *words):
            text = fixer(text)
    return text


def _pin_images(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        image = m.group("image")
        if "@sha256:" in image or image.lower() == "scratch" or "$" in image:
            return m.group(0)
        name, _, tag = image.rpartition(":") if ":" in image.split("/")[-1] else (image, "", "")
        pinned = PINNED_BY_REPOSITORY.get(name.split("/")[-1] if "/" not in name else name)
        if pinned and (not tag or tag == "latest"):
            return f"{m.group('lead')}{pinned}{m.group('rest')}"
        return m.group(0)

    return re.sub(
        r"(?im)^(?P<lead>\s*FROM\s+(?:--platform=\S+\s+)?)(?P<image>\S+)(?P<rest>.*)$", repl, text
    )


def _fix_add(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        args = m.group("args")
        if re.search(r"https?://", args):
            return (
                f"# removed by the Infra agent: ADD of a remote URL ({args.strip()}); "
                "vendor the file with a checksum and COPY it"
            )
        if re.search(r"\.(tar|tgz|gz|bz2|xz|zip)\b", args):
            return m.group(0)
        return f"{m.group('lead')}COPY{args}"

    return re.sub(r"(?im)^(?P<lead>\s*)ADD(?P<args>\s.*)$", repl, text)


def _pip_no_cache(text: str) -> str:
    return re.sub(r"\bpip3?\s+install\b(?![^\n]*--no-cache-dir)", r"\g<0> --no-cache-dir", text)


def _apt_no_recommends(text: str) -> str:
    return re.sub(
        r"\bapt-get\s+(?:-y\s+)?install\b(?![^\n]*--no-install-recommends)",
        r"\g<0> --no-install-recommends",
        text,
    )


def _apt_cleanup(text: str) -> str:
    out = []
    for line in text.split("\n"):
        if (
            "apt-get install" in line
            and "/var/lib/apt/lists" not in line
            and not line.rstrip().endswith("\\")
        ):
            line = f"{line.rstrip()} && rm -rf /var/lib/apt/lists/*"
        out.append(line)
    return "\n".join(out)


def _json_cmd(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        body = m.group("body").strip()
        if body.startswith("[") or body.endswith("\\"):
            return m.group(0)
        try:
            argv = shlex.split(body)
        except ValueError:
            return m.group(0)
        quoted = ", ".join('"' + a.replace("\\", "\\\\").replace('"', '\\"') + '"' for a in argv)
        return f"{m.group('lead')}{m.group('kw')} [{quoted}]"

    return re.sub(r"(?im)^(?P<lead>\s*)(?P<kw>CMD|ENTRYPOINT)\s+(?P<body>.+)$", repl, text)


def _ensure_user(text: str) -> str:
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if re.match(r"(?i)^\s*FROM\s", line)]
    last = starts[-1] if starts else 0
    uid = 65532 if "distroless" in (lines[last] if starts else "") else RUNTIME_UID
    body = [
        line
        for line in lines[last:]
        if not re.match(r"(?i)^\s*USER\s+(?:root|0)(?::\S+)?\s*$", line)
    ]
    has_user = any(re.match(r"(?i)^\s*USER\s+\S", line) for line in body)
    if not has_user:
        at = next(
            (
                i
                for i, line in enumerate(body)
                if re.match(r"(?i)^\s*(EXPOSE|HEALTHCHECK|CMD|ENTRYPOINT)\b", line)
            ),
            None,
        )
        if at is None:
            at = len(body) - 1 if body and body[-1] == "" else len(body)
        body.insert(at, f"USER {uid}")
    return "\n".join(lines[:last] + body)


# --- compose ----------------------------------------------------------------------------


def _fix_compose(text: str, keys: set[str]) -> str:
    doc = yaml.safe_load(text) or {}
    services = doc.get("services") or {}
    for service in services.values():
        if not isinstance(service, dict):
            continue
        if _any(keys, "privileged"):
            service.pop("privileged", None)
        if _any(keys, "network_mode", "host network", "host-network", "network-host") and str(
            service.get("network_mode", "")
        ).startswith("host"):
            service.pop("network_mode")
        if _any(keys, "docker.sock", "docker socket", "docker-socket"):
            volumes = [v for v in service.get("volumes", []) if not _mounts_socket(v)]
            service["volumes"] = volumes
            if not volumes:
                service.pop("volumes")
        if _any(keys, "0.0.0.0", "port", "bind", "loopback", "interface") and "ports" in service:
            service["ports"] = [_loopback_port(p) for p in service["ports"]]
        if _any(keys, "cap_add", "sys_admin", "capabilit"):
            service.pop("cap_add", None)
    return "# Corrected by the Cadência Infra agent.\n" + yaml.safe_dump(doc, sort_keys=False)


def _mounts_socket(volume: object) -> bool:
    """A bind of a runtime socket or a folder above one (``/``, ``/var/run``...), as the gate
    judges it (``exposes_socket``), in short (``/var/run:/x``) or long syntax."""
    if isinstance(volume, dict):
        source = str(volume.get("source") or "")
    else:
        source = str(volume).split(":", 1)[0]
    if source.startswith("\\\\"):  # a Windows named pipe: \\.\pipe\docker_engine
        source = source.replace("\\", "/")
    return source.startswith("/") and exposes_socket(host_path(source))


def _loopback_port(entry: object) -> object:
    if isinstance(entry, dict):
        return {**entry, "host_ip": "127.0.0.1"}
    spec = str(entry)
    parts = spec.split(":")
    if len(parts) == 1:
        return f"127.0.0.1::{spec}"
    if len(parts) == 2:
        return f"127.0.0.1:{spec}"
    return "127.0.0.1:" + ":".join(parts[-2:])


# --- workflow ---------------------------------------------------------------------------


def _fix_workflow(text: str, keys: set[str]) -> str:
    doc = yaml.safe_load(text) or {}
    if True in doc:  # YAML 1.1 reads the bare key `on` as a boolean
        doc = {("on" if k is True else k): v for k, v in doc.items()}
    if _any(keys, "pull_request_target", "pull-request-target"):
        doc["on"] = _replace_trigger(doc.get("on"))
    if _any(keys, "permission"):
        least = {"contents": "read"}
        ordered: dict[Any, Any] = {}
        for k, v in doc.items():
            if k == "jobs" and "permissions" not in ordered:
                ordered["permissions"] = least
            if k == "permissions":
                ordered[k] = least if _too_broad(v) else v
            else:
                ordered[k] = v
        ordered.setdefault("permissions", least)
        doc = ordered
    if _any(
        keys, "github.event", "github.head_ref", "injection", "interpolat", "run-shell", "script"
    ):
        for job in (doc.get("jobs") or {}).values():
            for step in (job or {}).get("steps", []) or []:
                if isinstance(step, dict) and isinstance(step.get("run"), str):
                    _lift_expressions(step)
    dumped = yaml.safe_dump(doc, sort_keys=False, width=1000)
    return "# Corrected by the Cadência Infra agent.\n" + re.sub(r"(?m)^'on':", "on:", dumped)


def _too_broad(value: object) -> bool:
    if isinstance(value, str):
        return value in {"write-all", "read-all"}
    return isinstance(value, dict) and any(v == "write" for v in value.values())


def _replace_trigger(on: object) -> object:
    if isinstance(on, str):
        return "pull_request" if on == "pull_request_target" else on
    if isinstance(on, list):
        return list(dict.fromkeys("pull_request" if t == "pull_request_target" else t for t in on))
    if isinstance(on, dict):
        return {("pull_request" if k == "pull_request_target" else k): v for k, v in on.items()}
    return on


def _lift_expressions(step: dict[str, object]) -> None:
    """Move ``${{ github.event.* }}`` out of ``run:`` into ``env:``, read as shell vars."""
    env = dict(step.get("env") or {})  # type: ignore[call-overload]

    def repl(m: re.Match[str]) -> str:
        expr = m.group("expr").strip()
        name = re.sub(r"[^A-Z0-9]+", "_", expr.upper()).strip("_")
        env[name] = "${{ " + expr + " }}"
        line_start = m.string.rfind("\n", 0, m.start()) + 1
        quotes_before = len(re.findall(r'(?<!\\)"', m.string[line_start : m.start()]))
        # Inside a double-quoted string already: the quotes protect it; else add them.
        return f"${{{name}}}" if quotes_before % 2 else f'"${{{name}}}"'

    step["run"] = re.sub(
        r"\$\{\{\s*(?P<expr>github\.(?:event\.|head_ref)[^}]*?)\s*\}\}", repl, str(step["run"])
    )
    if env:
        step["env"] = env
