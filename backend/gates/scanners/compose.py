"""Built-in compose checks: privileged, host network, ports on all interfaces, docker socket.

Parsed with PyYAML's node API (not ``safe_load``) so each finding keeps its line.
"""

from __future__ import annotations

import ipaddress

import yaml

from backend.gates.findings import Finding, ScanResult, Severity
from backend.gates.scanners._base import ScanContext
from backend.gates.targets import is_compose

TOOL = "compose"
_TRUE = {"true", "yes", "on"}


def scan(ctx: ScanContext) -> ScanResult | None:
    """Check every compose file of the copy; ``None`` when there is none."""
    targets = [f for f in ctx.files if is_compose(f)]
    if not targets:
        return None
    findings: list[Finding] = []
    for rel in targets:
        findings.extend(
            check_compose((ctx.root / rel).read_text(encoding="utf-8", errors="replace"), rel)
        )
    return ScanResult.from_findings(TOOL, findings)


def check_compose(text: str, file: str = "compose.yaml") -> list[Finding]:
    """Run the compose checks on one file's text."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        return [_finding(file, line, "compose-invalid-yaml", "error", f"not valid YAML: {exc}")]
    services = _get(root, "services")
    if not isinstance(services, yaml.MappingNode):
        return []
    findings: list[Finding] = []
    for key, service in _pairs(services):
        if isinstance(service, yaml.MappingNode):
            findings.extend(_check_service(str(key.value), service, file))
    return findings


def _check_service(name: str, service: yaml.MappingNode, file: str) -> list[Finding]:
    findings: list[Finding] = []
    privileged = _get(service, "privileged")
    if isinstance(privileged, yaml.ScalarNode) and str(privileged.value).lower() in _TRUE:
        findings.append(
            _finding(
                file,
                _line(privileged),
                "compose-privileged",
                "error",
                f"service {name!r} runs privileged: full access to the host",
            )
        )
    network = _get(service, "network_mode")
    if isinstance(network, yaml.ScalarNode) and str(network.value) == "host":
        findings.append(
            _finding(
                file,
                _line(network),
                "compose-host-network",
                "error",
                f"service {name!r} uses the host network: its ports bypass isolation",
            )
        )
    ports = _get(service, "ports")
    if isinstance(ports, yaml.SequenceNode):
        for port in ports.value:
            exposed = _port_on_all_interfaces(port)
            if exposed:
                findings.append(
                    _finding(
                        file,
                        _line(port),
                        "compose-port-all-interfaces",
                        "error",
                        f"service {name!r} publishes {exposed} on every interface; "
                        'bind it to 127.0.0.1 (e.g. "127.0.0.1:8000:8000")',
                    )
                )
    volumes = _get(service, "volumes")
    if isinstance(volumes, yaml.SequenceNode):
        for volume in volumes.value:
            source = _volume_source(volume)
            if source is not None and source.rstrip("/").endswith("docker.sock"):
                findings.append(
                    _finding(
                        file,
                        _line(volume),
                        "compose-docker-socket",
                        "error",
                        f"service {name!r} mounts the docker socket ({source}): root on the host",
                    )
                )
    return findings


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


def _port_on_all_interfaces(node: yaml.Node) -> str | None:
    if isinstance(node, yaml.ScalarNode):
        return str(node.value) if published_on_all_interfaces(str(node.value)) else None
    if isinstance(node, yaml.MappingNode):
        host_ip = _get(node, "host_ip")
        target = _get(node, "target")
        label = str(target.value) if isinstance(target, yaml.ScalarNode) else "a port"
        if host_ip is None or (
            isinstance(host_ip, yaml.ScalarNode) and _is_any(str(host_ip.value))
        ):
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
        return False  # a named interface or variable; not provably all interfaces
    return address.is_unspecified


def _volume_source(node: yaml.Node) -> str | None:
    if isinstance(node, yaml.ScalarNode):
        return str(node.value).split(":", 1)[0]
    if isinstance(node, yaml.MappingNode):
        source = _get(node, "source")
        return str(source.value) if isinstance(source, yaml.ScalarNode) else None
    return None


def _pairs(node: yaml.MappingNode) -> list[tuple[yaml.Node, yaml.Node]]:
    """Key/value pairs, with ``<<: *anchor`` merge keys expanded (compose files use them)."""
    pairs: list[tuple[yaml.Node, yaml.Node]] = []
    merged: list[tuple[yaml.Node, yaml.Node]] = []
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and key.tag == "tag:yaml.org,2002:merge":
            sources = value.value if isinstance(value, yaml.SequenceNode) else [value]
            for source in sources:
                if isinstance(source, yaml.MappingNode):
                    merged.extend(_pairs(source))
        else:
            pairs.append((key, value))
    own = {str(k.value) for k, _ in pairs if isinstance(k, yaml.ScalarNode)}
    return pairs + [(k, v) for k, v in merged if str(k.value) not in own]


def _get(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    for k, v in _pairs(node):
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return v
    return None


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _finding(file: str, line: int | None, rule: str, severity: Severity, message: str) -> Finding:
    return Finding(file=file, line=line, tool=TOOL, rule=rule, severity=severity, message=message)
