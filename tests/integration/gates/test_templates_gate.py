"""The whole gate on Helm charts, kustomizations and compose files named anything (real scanners).

A chart's templates are not YAML until rendered: no scanner may fail the gate on them as a
parse error, and the JSON says they were not checked. A compose file is checked whatever
its name, and a Kubernetes manifest as what it is.
"""

from __future__ import annotations

from pathlib import Path

from backend.gates.runner import run_gates
from backend.gates.sandbox import RULE, Limits, run_sandboxed
from backend.gates.scanners._base import ScanContext
from tests.integration.gates.conftest import write_tree

CHART = {
    "charts/web/Chart.yaml": "apiVersion: v2\nname: web\nversion: 0.1.0\nappVersion: '1.16.0'\n",
    "charts/web/values.yaml": "image:\n  repository: nginx\n  tag: ''\nservices:\n  web:\n"
    "    image: nginx\n",
    "charts/web/templates/deployment.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "web.fullname" . }}
  labels:
    {{- include "web.labels" . | nindent 4 }}
spec:
  template:
    spec:
      containers:
        - name: {{ .Chart.Name }}
          image: "{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.Version }}"
          {{- with .Values.resources }}
          resources:
            {{- toYaml . | nindent 12 }}
          {{- end }}
""",
    "charts/web/templates/iam-policy.yaml": """\
{{- if .Values.iam.create }}
apiVersion: iam.services.k8s.aws/v1alpha1
kind: Policy
metadata:
  name: {{ .Release.Name }}
spec:
  policyDocument: |
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject",
     "Resource": "arn:aws:s3:::{{ .Values.bucket }}/*"}]}
{{- end }}
""",
    "k8s/base/kustomization.yaml": "resources:\n- deployment.yaml\n",
    "k8s/base/deployment.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx
""",
    "k8s/overlays/prod/kustomization.yaml": (
        "resources:\n- ../../base\nimages:\n- name: nginx\n  newTag: 1.27.0\n"
        "patches:\n- path: replicas.yaml\n"
    ),
    "k8s/overlays/prod/replicas.yaml": (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n"
    ),
    "deploy/stack.yml": (
        "services:\n  web:\n    image: nginx:1.27-alpine\n    ports: ['127.0.0.1:8080:80']\n"
    ),
}


def test_a_helm_chart_and_a_kustomization_pass_with_a_note(
    scanners: dict[str, str], tmp_path: Path
) -> None:
    report = run_gates(write_tree(tmp_path, CHART))
    document = report.to_json()
    assert report.verdict == "pass", document
    notes = {(f.tool, f.rule, f.file) for f in report.findings}
    assert ("kubernetes", "k8s-helm-chart-not-rendered", "charts/web/Chart.yaml") in notes
    assert all(not f.blocking for f in report.findings), document
    qa = document["gates"][0]  # type: ignore[index]
    assert "k8s-helm-chart-not-rendered" in {f["rule"] for f in qa["findings"]}


def test_compose_named_anything_and_manifests_are_checked(
    scanners: dict[str, str], tmp_path: Path
) -> None:
    files = dict(CHART)
    files["deploy/stack.yml"] = (
        "services:\n  web:\n    image: nginx:1.27-alpine\n    volumes: ['/var/run/:/host-run:ro']\n"
    )
    files["ops/agent.yaml"] = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n"
        "  - name: a\n    image: datadog/agent:latest\n"
    )
    qa = run_gates(write_tree(tmp_path, files)).gate("qa")
    blocking = sorted((f.tool, f.rule, f.file) for f in qa.findings if f.blocking)
    assert blocking == [
        ("compose", "compose-docker-socket", "deploy/stack.yml"),
        ("kubernetes", "k8s-image-latest", "ops/agent.yaml"),
    ]


def test_a_manifest_alias_bomb_is_exceeded_limits(scanners: dict[str, str], tmp_path: Path) -> None:
    lines = ["apiVersion: v1", "kind: Pod", 'a: &a ["lol","lol","lol","lol","lol","lol","lol"]']
    previous = "a"
    for name in "bcdefg":
        lines.append(f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]")
        previous = name
    lines.append(f"spec:\n  containers: *{previous}")
    root = write_tree(tmp_path, {"k8s/pod.yaml": "\n".join(lines) + "\n"})
    ctx = ScanContext(root=root, files=("k8s/pod.yaml",))
    result = run_sandboxed("kubernetes", ctx, Limits(memory_bytes=256 * 1024**2))
    assert result is not None
    assert [(f.rule, f.file, f.severity) for f in result.findings] == [
        (RULE, "k8s/pod.yaml", "error")
    ]
