"""Small infra trees for the gate tests and the benchmark: one clean, one per planted problem."""

from __future__ import annotations

CLEAN_DOCKERFILE = """\
FROM python:3.12-slim AS build
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir --prefix=/install -r requirements.txt

FROM python:3.12-slim
WORKDIR /app
COPY --from=build /install /usr/local
COPY . .
USER 10001:10001
EXPOSE 8000
HEALTHCHECK --interval=30s CMD ["python", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:8000/healthz')"]
CMD ["python", "-m", "app"]
"""

CLEAN_NODE_DOCKERFILE = """\
FROM node:20.17-alpine AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev

FROM node:20.17-alpine
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY . .
USER 10001:10001
EXPOSE 3000
CMD ["node", "server.js"]
"""

CLEAN_COMPOSE = """\
services:
  api:
    build: ./services/api
    image: api:1.0.0
    ports:
      - "127.0.0.1:8000:8000"
    environment:
      DATABASE_URL: ${DATABASE_URL}
  web:
    build: ./services/web
    image: web:1.0.0
    ports:
      - "127.0.0.1:3000:3000"
"""

CLEAN_WORKFLOW = """\
name: ci
on:
  push:
    branches: [main]
  pull_request:
permissions:
  contents: read
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: test
        env:
          TITLE: ${{ github.event.pull_request.title }}
        run: |
          echo "testing $TITLE"
          python -m pytest -q
"""

CLEAN_POLICY = """\
{
  "Version": "2012-10-17",
  "Statement": [
    {
      "Effect": "Allow",
      "Action": ["dynamodb:GetItem", "dynamodb:PutItem"],
      "Resource": "arn:aws:dynamodb:us-east-1:123456789012:table/execucoes"
    }
  ]
}
"""

CLEAN_TF = """\
resource "aws_dynamodb_table" "execucoes" {
  name         = "execucoes"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "chave"

  attribute {
    name = "chave"
    type = "S"
  }
}
"""

CLEAN_TREE: dict[str, str] = {
    "services/api/Dockerfile": CLEAN_DOCKERFILE,
    "services/web/Dockerfile.prod": CLEAN_NODE_DOCKERFILE,
    "compose.yaml": CLEAN_COMPOSE,
    ".github/workflows/ci.yml": CLEAN_WORKFLOW,
    "deploy/iam/ledger-policy.json": CLEAN_POLICY,
    "deploy/terraform/main.tf": CLEAN_TF,
}

FAKE_AWS_KEY = "AKIA" + "QWERTYUIOPASDFGH"  # built at runtime so this file holds no key
PRIVATE_KEY = (
    "-----BEGIN " + "RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAv3Qm6bq4rJpTnFzW0kZ3Zr1yQ8n6T0mQh1pA4sV7cYbqXr2Uu9\n"
    "-----END " + "RSA PRIVATE KEY-----\n"
)

PLANTED_TREE: dict[str, str] = {
    "services/api/Dockerfile": (
        'FROM python:latest\nWORKDIR /app\nCOPY . .\nUSER root\nCMD ["python", "app.py"]\n'
    ),
    "compose.yaml": (
        "services:\n"
        "  api:\n"
        "    image: api:1.0.0\n"
        "    privileged: true\n"
        "    ports:\n"
        '      - "0.0.0.0:8000:8000"\n'
    ),
    "config/app.env": f"AWS_ACCESS_KEY_ID={FAKE_AWS_KEY}\n",
    "config/deploy_key.pem": PRIVATE_KEY,
    ".github/workflows/triage.yml": (
        "name: triage\n"
        "on:\n"
        "  pull_request_target:\n"
        "  issues:\n"
        "    types: [opened]\n"
        "jobs:\n"
        "  label:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        '      - run: echo "${{ github.event.issue.title }}"\n'
    ),
    "deploy/iam/policy.json": (
        '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", '
        '"Action": "s3:GetObjectt", "Resource": "arn:aws:s3:::bucket/*"}]}\n'
    ),
    "deploy/terraform/main.tf": 'resource "null_resource" "x" {\n  triggers = {\n  a="b"\n  }\n}\n',
}
