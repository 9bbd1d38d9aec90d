#!/usr/bin/env bash
# Install everything the tests need and run the whole suite (what .ci/run calls).
# Starts a real PostgreSQL (Debian's postgresql-15) unless CADENCIA_TEST_PG_URL is set;
# the tests start moto's server themselves. With CI=true nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install -q --disable-pip-version-check -e '.[dev]'

# semgrep pins its own dependency versions (opentelemetry, jsonschema) that clash with
# FastAPI's, so it lives in a venv of its own; the gate finds it via CADENCIA_SEMGREP_BIN.
if [ ! -x .venv-tools/bin/semgrep ]; then
  python3 -m venv .venv-tools
  .venv-tools/bin/pip install -q --disable-pip-version-check 'semgrep==1.185.0'
fi
export CADENCIA_SEMGREP_BIN="$PWD/.venv-tools/bin/semgrep"

if [ -z "${CADENCIA_TEST_PG_URL:-}" ]; then
  CADENCIA_TEST_PG_URL="$(bash scripts/start-postgres.sh)"
  export CADENCIA_TEST_PG_URL
fi

python3 -m pytest -q -p no:cacheprovider "$@"
