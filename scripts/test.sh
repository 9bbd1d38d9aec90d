#!/usr/bin/env bash
# Install everything the tests need and run the whole suite (what .ci/run calls).
# Starts a real PostgreSQL (Debian's postgresql-15) unless CADENCIA_TEST_PG_URL is set;
# the tests start moto's server themselves. In CI (CI=1/true/yes) nothing is skipped.
# ruff (check + format) and mypy run first; any finding fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

# The same install a user does: the project, then the scanners' own step (semgrep's venv
# in the tools directory, CADENCIA_TOOLS_DIR; idempotent), so the tests use what a user gets.
python3 -m pip install -q --disable-pip-version-check -e '.[dev]'
python3 -m backend.cli tools install

if [ -z "${CADENCIA_TEST_PG_URL:-}" ]; then
  CADENCIA_TEST_PG_URL="$(bash scripts/start-postgres.sh)"
  export CADENCIA_TEST_PG_URL
fi

# The style gates run before any test, all three of them, so one run shows every problem.
lint_failed=()
python3 -m ruff check . || lint_failed+=("ruff check .")
python3 -m ruff format --check . || lint_failed+=("ruff format --check .")
python3 -m mypy backend console || lint_failed+=("mypy backend console")
if [ "${#lint_failed[@]}" -gt 0 ]; then
  printf 'scripts/test.sh: failed: %s\n' "${lint_failed[@]}" >&2
  exit 1
fi

status=0
python3 -m pytest -q -p no:cacheprovider --durations=25 "$@" || status=$?
if [ "$status" -eq 5 ]; then
  # pytest's "no tests collected": a wrong path or -k/-m filter must not look like a pass.
  echo "scripts/test.sh: pytest collected no tests (exit 5); check the paths and filters" >&2
  exit 1
fi
exit "$status"
