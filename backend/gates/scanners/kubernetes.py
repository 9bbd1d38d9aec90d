"""Built-in Kubernetes checks on plain manifests; Helm charts and Go templates noted.

A manifest is YAML with top-level ``apiVersion`` and ``kind``, found by content whatever
its name. Each pod template is checked: privileged containers, host namespaces, dangerous
capabilities, ``hostPath`` volumes of a runtime socket or a folder above one (the compose
check's list) or of the host's system folders, images with no tag or ``:latest``
(unless a kustomization retags them). A Helm chart's templates and any YAML with Go
template actions are not YAML until rendered: they get an ``info`` note saying they were
not checked, never a parse error.
"""

from __future__ import annotations

import posixpath

import yaml

from backend.gates.findings import Finding, ScanResult, Severity
from backend.gates.scanners._base import ScanContext
from backend.gates.scanners.compose import (
    HOST_DIRS,
    capability,
    dangerous_capability,
    exposes_socket,
    host_path,
    image_message,
    image_problem,
)
from backend.gates.scanners.compose_model import Value, documents
from backend.gates.targets import is_kustomization, kubernetes_targets

TOOL = "kubernetes"
_TRUE = {"true", "yes", "on", "y", "1"}
_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
_POD_PATHS = (
    ("spec", "template", "spec"),
    ("spec", "jobTemplate", "spec", "template", "spec"),
    ("template", "spec"),
)
_MAX_LISTED = 5
_SHARED = {
    "hostNetwork": "network: its ports and the node's services are one",
    "hostPID": "process namespace: it sees and signals the node's processes",
    "hostIPC": "IPC namespace",
}


def targets(ctx: ScanContext) -> list[str]:
    """The manifests, kustomizations and templates of the copy."""
    found = kubernetes_targets(ctx.root, ctx.files)
    return [
        *found.manifests,
        *(f for chart in found.charts.values() for f in chart),
        *found.templates,
    ]


def scan(ctx: ScanContext) -> ScanResult | None:
    """Check every plain manifest of the copy, note every template; ``None`` when none.

    It parses the PR's YAML: the gate runs it in :mod:`backend.gates.sandbox`.
    """
    found = kubernetes_targets(ctx.root, ctx.files)
    if not found:
        return None
    parsed: list[tuple[str, list[Value]]] = []
    findings: list[Finding] = []
    for rel in found.manifests:
        ctx.reading(rel)
        text = (ctx.root / rel).read_text(encoding="utf-8", errors="replace")
        try:
            parsed.append((rel, documents(text, rel)))
        except yaml.YAMLError as exc:
            findings.append(_unreadable(rel, text, exc))
    retagged = _retagged_by_folder(parsed)
    for rel, docs in parsed:
        pinned = retagged.get(posixpath.dirname(rel), frozenset())
        for doc in docs:
            findings.extend(check_object(doc, pinned))
    for chart, templates in sorted(found.charts.items()):
        findings.append(_chart_note(chart, templates))
    findings.extend(_template_note(rel) for rel in found.templates)
    notes = len(found.templates) + sum(len(t) for t in found.charts.values())
    detail = f"{notes} template file(s) not rendered, not checked" if notes else None
    return ScanResult.from_findings(TOOL, findings, detail)


def check_manifest(text: str, file: str = "manifest.yaml") -> list[Finding]:
    """Run the checks on one manifest's text (every document of it).

    Raises:
        yaml.YAMLError: the text is not YAML.
    """
    docs = documents(text, file)
    retagged = _retagged(docs)
    return [f for doc in docs for f in check_object(doc, retagged)]


def check_object(doc: Value, retagged: frozenset[str] = frozenset()) -> list[Finding]:
    """The findings of one Kubernetes object (a ``List``'s items each, a Kustomization's
    ``images``); ``retagged`` names images a kustomization gives a pinned tag."""
    kind = (doc.get("kind") or Value("", doc.file, doc.line)).text or ""
    if kind == "List":
        items = doc.get("items")
        return [f for item in (items.items if items else []) for f in check_object(item, retagged)]
    if kind in {"Kustomization", "Component"} or (not kind and doc.get("images")):
        return _check_kustomization(doc)
    name = _name(doc, kind)
    pod = doc.get("spec") if kind == "Pod" else _pod_spec(doc)
    return _check_pod(name, pod, retagged) if pod is not None else []


def _pod_spec(doc: Value) -> Value | None:
    for path in _POD_PATHS:
        node: Value | None = doc
        for key in path:
            node = node.get(key) if node is not None else None
        if node is not None and isinstance(node.data, dict):
            return node
    return None


def _name(doc: Value, kind: str) -> str:
    metadata = doc.get("metadata")
    name = metadata.get("name") if metadata is not None else None
    return f"{kind or 'object'} {((name.text if name else None) or '?')!r}"


def _check_pod(owner: str, pod: Value, retagged: frozenset[str]) -> list[Finding]:
    findings: list[Finding] = []
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        value = pod.get(key)
        if value is not None and (value.text or "").strip().lower() in _TRUE:
            rule = "k8s-host-network" if key == "hostNetwork" else "k8s-host-namespace"
            findings.append(
                _at(
                    value,
                    rule,
                    f"{owner} sets {key}: true: it shares the node's {_SHARED[key]}",
                )
            )
    findings.extend(_check_volumes(owner, pod))
    for list_key in _CONTAINER_LISTS:
        containers = pod.get(list_key)
        for container in containers.items if containers is not None else []:
            findings.extend(_check_container(owner, container, retagged))
    return findings


def _check_volumes(owner: str, pod: Value) -> list[Finding]:
    findings: list[Finding] = []
    volumes = pod.get("volumes")
    for volume in volumes.items if volumes is not None else []:
        host = volume.get("hostPath")
        where = host.get("path") if host is not None else None
        if where is None or where.text is None:
            continue
        path = host_path(where.text)
        if exposes_socket(path):
            findings.append(
                _at(
                    where,
                    "k8s-docker-socket",
                    f"{owner} mounts the host's {where.text} (a container runtime's socket or "
                    "a folder above one): root on the node, read-only or not",
                )
            )
        elif path in HOST_DIRS:
            findings.append(
                _at(
                    where,
                    "k8s-host-path-mount",
                    f"{owner} mounts the host's {path}: mount only the files the pod needs",
                )
            )
    return findings


def _check_container(owner: str, container: Value, retagged: frozenset[str]) -> list[Finding]:
    findings: list[Finding] = []
    name = container.get("name")
    who = f"{owner} container {((name.text if name else None) or '?')!r}"
    image = container.get("image")
    if image is not None and image.text is not None:
        problem = image_problem(image.text)
        if problem is not None and _repository(image.text) not in retagged:
            findings.append(
                _at(image, f"k8s-image-{problem}", image_message(who, image.text, problem))
            )
    context = container.get("securityContext")
    privileged = context.get("privileged") if context is not None else None
    if privileged is not None and (privileged.text or "").strip().lower() in _TRUE:
        findings.append(
            _at(privileged, "k8s-privileged", f"{who} runs privileged: the node's root")
        )
    caps = context.get("capabilities") if context is not None else None
    added = caps.get("add") if caps is not None else None
    for cap in added.items if added is not None else []:
        spelled = (cap.text or "").strip()
        if dangerous_capability(spelled):
            findings.append(
                _at(
                    cap,
                    "k8s-dangerous-capability",
                    f"{who} adds {capability(spelled)}: a capability that lets the container "
                    "escape to the node; drop it",
                )
            )
    return findings


def _check_kustomization(doc: Value) -> list[Finding]:
    findings: list[Finding] = []
    images = doc.get("images")
    for entry in images.items if images is not None else []:
        tag = entry.get("newTag")
        if tag is not None and (tag.text or "").strip() == "latest" and entry.get("digest") is None:
            ref = (entry.get("newName") or entry.get("name") or tag).text or "?"
            findings.append(
                _at(
                    tag,
                    "k8s-image-latest",
                    image_message("kustomization", f"{ref}:latest", "latest"),
                )
            )
    return findings


def _retagged(docs: list[Value]) -> frozenset[str]:
    """Images every kustomization of the copy pins (``newTag`` other than latest, or a
    ``digest``): a base manifest may leave them untagged, kustomize sets the tag."""
    names: set[str] = set()
    for doc in docs:
        images = doc.get("images") if isinstance(doc.data, dict) else None
        for entry in images.items if images is not None else []:
            name = entry.get("name")
            tag = (entry.get("newTag") or Value("", "", 0)).text or ""
            if (
                name is not None
                and name.text
                and (entry.get("digest") or tag not in {"", "latest"})
            ):
                names.add(name.text.strip())
    return frozenset(names)


def _retagged_by_folder(parsed: list[tuple[str, list[Value]]]) -> dict[str, frozenset[str]]:
    """For each folder, the images a kustomization pins for the manifests in it: those of a
    kustomization in the folder, or of one whose ``resources`` reach it (``../base``)."""
    kustomizations = {posixpath.dirname(rel): docs for rel, docs in parsed if is_kustomization(rel)}
    reach: dict[str, set[str]] = {}
    for folder, docs in kustomizations.items():
        reach[folder] = {folder}
        for doc in docs:
            resources = doc.get("resources") if isinstance(doc.data, dict) else None
            for entry in resources.items if resources is not None else []:
                reach[folder].add(posixpath.normpath(posixpath.join(folder, entry.text or ".")))
    pinned: dict[str, set[str]] = {}
    for folder, docs in kustomizations.items():
        names = _retagged(docs)
        seen: set[str] = set()
        todo = [folder]
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            pinned.setdefault(current, set()).update(names)
            todo.extend(reach.get(current, ()))
    return {folder: frozenset(names) for folder, names in pinned.items()}


def _repository(ref: str) -> str:
    """``nginx`` of ``nginx:latest``; a registry's port stays (``host:5000/app``)."""
    ref = ref.strip()
    head, slash, last = ref.rpartition("/")
    return f"{head}{slash}{last.partition(':')[0]}"


def _chart_note(chart: str, templates: list[str]) -> Finding:
    shown = ", ".join(templates[:_MAX_LISTED]) + (" ..." if len(templates) > _MAX_LISTED else "")
    return _finding(
        f"{chart}/Chart.yaml".removeprefix("./"),
        None,
        "k8s-helm-chart-not-rendered",
        "info",
        f"Helm chart {chart!r}: {len(templates)} template file(s) are Go templates, not YAML "
        f"until rendered, so the gate did not check them ({shown}); commit the output of "
        "`helm template` to have the manifests checked",
    )


def _template_note(rel: str) -> Finding:
    return _finding(
        rel,
        None,
        "k8s-go-template-not-checked",
        "info",
        "this YAML has Go template actions ({{ ... }}): it is not YAML until rendered, so the "
        "gate did not check it as compose or Kubernetes; commit the rendered output to have "
        "it checked",
    )


def _unreadable(rel: str, text: str, exc: yaml.YAMLError) -> Finding:
    if "{{" in text or "{%" in text:  # a template the patterns did not see (Jinja too)
        return _template_note(rel)
    mark = getattr(exc, "problem_mark", None)
    line = mark.line + 1 if mark is not None else None
    return _finding(rel, line, "k8s-invalid-yaml", "error", f"not valid YAML: {exc}")


def _at(value: Value, rule: str, message: str) -> Finding:
    return _finding(value.file, value.line, rule, "error", message)


def _finding(file: str, line: int | None, rule: str, severity: Severity, message: str) -> Finding:
    return Finding(file=file, line=line, tool=TOOL, rule=rule, severity=severity, message=message)
