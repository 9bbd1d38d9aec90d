"""Built-in compose checks: what a service can do to the host it runs on, and what it runs.

privileged, host network/pid/ipc namespaces, ports on every interface, dangerous
capabilities (however spelled: ``SYS_ADMIN``, ``cap_sys_admin``, ``ALL``), unconfined
seccomp/apparmor, bind mounts of a runtime socket or of any folder above one (``/``,
``/var``, ``/var/run``...; ``:ro`` does not make them safe) or of the host's system
folders, and images with no tag or ``:latest``. Compose files are found by content too.

They judge the project as compose would run it (``compose_model``: ``.env`` and defaults
interpolated, ``extends`` and ``include`` followed into the PR's other files).
"""

from __future__ import annotations

import ipaddress
import posixpath
import re
from pathlib import PurePosixPath
from typing import Literal

from backend.gates.findings import Finding, ScanResult, Severity
from backend.gates.scanners._base import ScanContext
from backend.gates.scanners.compose_model import Loader, Reader, Value
from backend.gates.targets import compose_targets

TOOL = "compose"
_TRUE = {"true", "yes", "on", "y", "1"}
_DANGEROUS_CAPS = frozenset(
    {
        "ALL",
        "SYS_ADMIN",
        "SYS_PTRACE",
        "SYS_MODULE",
        "SYS_RAWIO",
        "DAC_READ_SEARCH",
        "NET_ADMIN",
        "BPF",
    }
)
_SOCKETS = ("docker.sock", "containerd.sock", "podman.sock", "crio.sock", "docker_engine")
RUNTIME_SOCKETS = (
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/var/run/containerd/containerd.sock",
    "/run/k3s/containerd/containerd.sock",
    "/run/podman/podman.sock",
    "/var/run/podman/podman.sock",
    "/var/run/crio/crio.sock",
    "/run/crio/crio.sock",
    "/var/run/cri-dockerd.sock",
    "/run/buildkit/buildkitd.sock",
    "/run/user/0/docker.sock",
)
"""Where container runtimes put their API socket (rootless docker: ``/run/user/UID``)."""
_SOCKET_PARENTS = frozenset(
    str(parent) for sock in RUNTIME_SOCKETS for parent in PurePosixPath(sock).parents
)
_ROOTLESS = re.compile(r"^/run/user(?:/\d+)?$")
# Host directories whose mount gives the container the host: the kernel's interfaces, the
# host's configuration, its images (the sockets' folders are socket exposure).
HOST_DIRS = frozenset({"/var/lib/docker", "/proc", "/sys", "/dev", "/etc", "/root", "/boot"})
_UNCONFINED = re.compile(
    r"^(seccomp|apparmor|systempaths)\s*[:=]\s*unconfined$|^label\s*[:=]\s*disable$", re.I
)


def targets(ctx: ScanContext) -> list[str]:
    """The compose files of the copy, by name or by content (whatever they are called)."""
    return compose_targets(ctx.root, ctx.files)


def scan(ctx: ScanContext) -> ScanResult | None:
    """Check every compose file of the copy; ``None`` when there is none.

    It parses the PR's YAML: the gate runs it in :mod:`backend.gates.sandbox`.
    """
    files = targets(ctx)
    if not files:
        return None
    present = set(ctx.files)

    def read(rel: str) -> str | None:
        if rel not in present:
            return None
        return (ctx.root / rel).read_text(encoding="utf-8", errors="replace")

    loader = Loader(read)
    findings: list[Finding] = []
    for rel in files:
        ctx.reading(rel)
        findings.extend(_check(loader, rel))
    return ScanResult.from_findings(TOOL, _unique(findings))


def check_compose(
    text: str, file: str = "compose.yaml", read: Reader | None = None
) -> list[Finding]:
    """Run the compose checks on one file's text; ``read`` gives the PR's other files."""
    loader = Loader(read or (lambda _rel: None))
    return _unique(_check(loader, file, text))


def _check(loader: Loader, file: str, text: str | None = None) -> list[Finding]:
    project = loader.project(file, text)
    findings = [_finding(p.file, p.line, p.rule, "error", p.message) for p in project.problems]
    for name, service in project.services:
        findings.extend(_check_service(name, service, project.volumes))
    return findings


def _check_service(name: str, service: Value, volumes: dict[str, Value]) -> list[Finding]:
    findings: list[Finding] = []
    image = service.get("image")
    if image is not None and image.text is not None and service.get("build") is None:
        problem = image_problem(image.text)
        if problem is not None:
            findings.append(
                _at(
                    image,
                    f"compose-image-{problem}",
                    image_message(f"service {name!r}", image.text, problem),
                )
            )
    privileged = service.get("privileged")
    if privileged is not None and (privileged.text or "").strip().lower() in _TRUE:
        findings.append(
            _at(
                privileged,
                "compose-privileged",
                f"service {name!r} runs privileged: full access to the host",
            )
        )
    network = service.get("network_mode")
    if network is not None and (network.text or "").strip().lower() == "host":
        findings.append(
            _at(
                network,
                "compose-host-network",
                f"service {name!r} uses the host network: its ports bypass isolation",
            )
        )
    for key in ("pid", "ipc", "uts", "userns_mode"):
        mode = service.get(key)
        if mode is not None and (mode.text or "").strip().lower() == "host":
            findings.append(
                _at(
                    mode,
                    "compose-host-namespace",
                    f"service {name!r} shares the host's {key} namespace: "
                    "it sees and signals host processes",
                )
            )
    findings.extend(_check_ports(name, service))
    findings.extend(_check_caps(name, service))
    for opt in _entries(service, "security_opt"):
        if _UNCONFINED.match((opt.text or "").strip()):
            findings.append(
                _at(
                    opt,
                    "compose-unconfined-security-opt",
                    f"service {name!r} sets {opt.text}: the kernel sandbox of the container is off",
                )
            )
    findings.extend(_check_volumes(name, service, volumes))
    return findings


def _check_ports(name: str, service: Value) -> list[Finding]:
    findings: list[Finding] = []
    for port in _entries(service, "ports"):
        exposed = _port_on_all_interfaces(port)
        if exposed:
            findings.append(
                _at(
                    port,
                    "compose-port-all-interfaces",
                    f"service {name!r} publishes {exposed} on every interface; "
                    'bind it to 127.0.0.1 (e.g. "127.0.0.1:8000:8000")',
                )
            )
    return findings


def _check_caps(name: str, service: Value) -> list[Finding]:
    findings: list[Finding] = []
    for cap in _entries(service, "cap_add"):
        spelled = (cap.text or "").strip()
        if dangerous_capability(spelled):
            findings.append(
                _at(
                    cap,
                    "compose-dangerous-capability",
                    f"service {name!r} adds {spelled}: a capability that lets the container "
                    "escape to the host; drop it",
                )
            )
    return findings


def dangerous_capability(spelled: str) -> bool:
    """True for a capability that lets a container escape (``SYS_ADMIN``, ``ALL``...)."""
    return capability(spelled) in _DANGEROUS_CAPS


def capability(spelled: str) -> str:
    """The kernel capability a ``cap_add`` entry names: ``cap_sys_admin`` is ``SYS_ADMIN``."""
    upper = spelled.strip().upper()
    return upper.removeprefix("CAP_")


def _check_volumes(name: str, service: Value, volumes: dict[str, Value]) -> list[Finding]:
    findings: list[Finding] = []
    for volume in _entries(service, "volumes"):
        source = _volume_source(volume)
        if source is None:
            continue
        path = _bind_path(volume.file, source, volumes)
        if path is None:
            continue
        if exposes_socket(path):
            what = "socket" if path.endswith(_SOCKETS) else f"socket's folder {path}"
            findings.append(
                _at(
                    volume,
                    "compose-docker-socket",
                    f"service {name!r} mounts the container runtime's {what} ({source}): "
                    "root on the host, read-only or not",
                )
            )
        elif path in HOST_DIRS or path.startswith(".."):
            where = "a host path outside the project" if path.startswith("..") else path
            findings.append(
                _at(
                    volume,
                    "compose-host-path-mount",
                    f"service {name!r} mounts {where} ({source}): the host itself or the "
                    "docker socket may be in it; mount only the files the service needs",
                )
            )
    return findings


def _bind_path(file: str, source: str, volumes: dict[str, Value]) -> str | None:
    """The host path a volume source binds: absolute, relative to the file, or a named
    volume whose ``driver_opts`` bind a ``device``; ``None`` for a plain named volume."""
    source = source.strip()
    if source.startswith("\\\\"):  # a Windows named pipe: \\.\pipe\docker_engine
        return host_path(source.replace("\\", "/"))
    if source.startswith("/"):
        return host_path(source)
    if source.startswith("."):
        return posixpath.normpath(posixpath.join(posixpath.dirname(file), source))
    named = volumes.get(source)
    opts = named.get("driver_opts") if named is not None else None
    device = opts.get("device") if opts is not None else None
    options = (opts.get("o") if opts is not None else None) or Value("", "", 0)
    if device is not None and device.text and "bind" in (options.text or ""):
        return _bind_path(file, device.text, {})
    return None


def exposes_socket(path: str) -> bool:
    """True when a normalised host path is a runtime socket or a folder above one: ``/``,
    ``/var``, ``/var/run``, ``/run/containerd``, ``/run/user/1000``..."""
    return path.endswith(_SOCKETS) or path in _SOCKET_PARENTS or bool(_ROOTLESS.match(path))


ImageProblem = Literal["untagged", "latest"]


def image_problem(ref: str) -> ImageProblem | None:
    """What is wrong with an image reference as it will be pulled, if anything.

    ``nginx`` and ``registry:5000/app`` have no tag (the runtime pulls ``:latest``);
    ``nginx:latest`` says it. A digest (``@sha256:...``) or any other tag passes. Variables
    are already interpolated with their defaults, so ``nginx:${TAG:-latest}`` is ``latest``;
    a tag (or a whole image) left to a variable with no default (``${TAG}``, ``${TAG:?}``)
    is the operator's required choice and passes. A Go template (``{{ }}``) is not judged.
    """
    ref = ref.strip()
    if not ref or "@" in ref or "{{" in ref:
        return None
    last = ref.rsplit("/", 1)[-1]
    _name, colon, tag = last.partition(":")
    if colon and tag == "latest":
        return "latest"
    if (colon and tag) or "${" in last:
        return None  # a tag, or a variable that may carry one
    return "untagged"


def image_message(owner: str, ref: str, problem: ImageProblem) -> str:
    """The message of an image finding for ``owner`` (a service, a container)."""
    said = "no tag (pulled as :latest)" if problem == "untagged" else "the tag :latest"
    return (
        f"{owner} runs image {ref.strip()!r} with {said}: what runs changes whenever the "
        "image is pushed; pin a version tag or a digest (@sha256:...). A tag left to a "
        "variable with no default (${TAG}, ${TAG:?}) passes; ${TAG:-latest} does not"
    )


def host_path(source: str) -> str:
    """An absolute bind source normalised (``//var/./run/`` is ``/var/run``)."""
    path = re.sub(r"/+", "/", source.strip())
    return posixpath.normpath(path) if path.startswith("/") else path


def published_on_all_interfaces(spec: str) -> bool:
    """True when a short-syntax ``ports`` entry is reachable on every host interface.

    ``"8000"`` (random host port) and ``"8000:8000"`` bind 0.0.0.0; so do
    ``"0.0.0.0:8000:8000"`` and ``"[::]:80:80"``. Loopback and specific addresses do not.
    """
    spec = spec.strip().split("/", 1)[0]
    if spec.startswith("["):
        host, _, _rest = spec[1:].partition("]")
        return _is_any(host)
    parts = spec.split(":")
    if len(parts) <= 2:
        return True
    return _is_any(":".join(parts[:-2]))


def _port_on_all_interfaces(port: Value) -> str | None:
    if port.text is not None:
        return port.text if published_on_all_interfaces(port.text) else None
    if isinstance(port.data, dict):
        host_ip = port.get("host_ip")
        target = port.get("target")
        label = target.text if target is not None and target.text else "a port"
        if host_ip is None or _is_any(host_ip.text or ""):
            return f"port {label}"
    return None


def _is_any(host: str) -> bool:
    host = host.strip().strip("[]")
    if host in {"", "*"}:
        return True
    if host == "localhost":
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False  # a named interface or unset variable; not provably all interfaces
    return address.is_unspecified


def _volume_source(volume: Value) -> str | None:
    if volume.text is not None:
        parts = volume.text.split(":")
        # "/data" alone is an anonymous volume at a container path: nothing of the host.
        return parts[0] if len(parts) >= 2 else None
    source = volume.get("source")
    return source.text if source is not None else None


def _entries(service: Value, key: str) -> list[Value]:
    value = service.get(key)
    return value.items if value is not None else []


def _unique(findings: list[Finding]) -> list[Finding]:
    """One finding per place and rule: a base file is reached once per file that extends it."""
    seen: set[tuple[str, int | None, str]] = set()
    out: list[Finding] = []
    for finding in findings:
        key = (finding.file, finding.line, finding.rule)
        if key not in seen:
            seen.add(key)
            out.append(finding)
    return out


def _at(value: Value, rule: str, message: str) -> Finding:
    return _finding(value.file, value.line, rule, "error", message)


def _finding(file: str, line: int | None, rule: str, severity: Severity, message: str) -> Finding:
    return Finding(file=file, line=line, tool=TOOL, rule=rule, severity=severity, message=message)
