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
# The on-call tests and the alert rules' own tests use Debian's Prometheus and Alertmanager.
if ! command -v promtool >/dev/null || ! command -v prometheus-alertmanager >/dev/null; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      prometheus prometheus-alertmanager >/dev/null
  else
    echo "scripts/test.sh: prometheus and prometheus-alertmanager are not installed" >&2
  fi
fi

# Tests outside tests/console run on CADENCIA_TEST_WORKERS pytest-xdist workers (default 2),
# each with a PostgreSQL cluster of its own (tool roles are cluster-wide); given only
# CADENCIA_TEST_PG_URL (one server, no CADENCIA_TEST_PG_URLS) they run on one worker.
workers="${CADENCIA_TEST_WORKERS:-2}"
if [ -z "${CADENCIA_TEST_PG_URL:-}" ]; then
  CADENCIA_TEST_PG_URL="$(bash scripts/start-postgres.sh)"
  urls="$CADENCIA_TEST_PG_URL"
  for i in $(seq 1 $((workers - 1))); do
    urls="$urls $(CADENCIA_TEST_PG_CLUSTER="cadencia_w$i" CADENCIA_TEST_PG_PORT=$((5432 + i)) \
      bash scripts/start-postgres.sh)"
  done
  export CADENCIA_TEST_PG_URL CADENCIA_TEST_PG_URLS="$urls"
elif [ -z "${CADENCIA_TEST_PG_URLS:-}" ]; then
  workers=1
fi

# The style gates run before any test, all three of them, so one run shows every problem.
lint_failed=()
python3 -m ruff check . || lint_failed+=("ruff check .")
python3 -m ruff format --check . || lint_failed+=("ruff format --check .")
python3 -m mypy backend console || lint_failed+=("mypy backend console")
# The shipped alert rules and their tests, and the example Alertmanager route.
promtool check rules deploy/prometheus/alerts.yml || lint_failed+=("promtool check rules")
promtool test rules deploy/prometheus/alerts_test.yml || lint_failed+=("promtool test rules")
amtool check-config deploy/alertmanager/alertmanager.yml >/dev/null \
  || lint_failed+=("amtool check-config")
if [ "${#lint_failed[@]}" -gt 0 ]; then
  printf 'scripts/test.sh: failed: %s\n' "${lint_failed[@]}" >&2
  exit 1
fi

run_pytest() {
  local status=0
  python3 -m pytest -q -p no:cacheprovider "$@" || status=$?
  if [ "$status" -eq 5 ]; then
    # pytest's "no tests collected": a wrong path or -k/-m filter must not look like a pass.
    echo "scripts/test.sh: pytest collected no tests (exit 5); check the paths and filters" >&2
    return 1
  fi
  return "$status"
}

if [ "$#" -gt 0 ]; then
  run_pytest "$@"  # what the caller asked for, in one process
  exit $?
fi
# The whole suite: the console's tests first and alone (they wait on a live UI and a live
# backend; a second worker's scanners would only make them wait longer), then the rest on
# the workers. Both phases run, and the run fails if either did.
status=0
run_pytest --durations=10 tests/console || status=$?
parallel=()
if [ "$workers" -gt 1 ]; then parallel=(-n "$workers"); fi
run_pytest --durations=25 "${parallel[@]}" --ignore=tests/console tests || status=$?
exit "$status"
