#!/usr/bin/env bash
# Start a local PostgreSQL for the test suite and print the admin URL to use.
# Debian's postgresql-15 cluster when running as root: `main` on 5432 by default;
# CADENCIA_TEST_PG_CLUSTER / CADENCIA_TEST_PG_PORT name another one, created on first use
# (scripts/test.sh gives each parallel test worker a cluster of its own: tool roles are
# cluster-wide, so two workers on one cluster would re-password each other's roles).
set -euo pipefail
PGPASS="${CADENCIA_TEST_PG_PASSWORD:-cadencia-test}"
PGPORT="${CADENCIA_TEST_PG_PORT:-5432}"
CLUSTER="${CADENCIA_TEST_PG_CLUSTER:-main}"

psql_admin() { su postgres -c "psql -v ON_ERROR_STOP=1 -qAt -p $PGPORT $*"; }

if [ "$(id -u)" = 0 ] && command -v pg_ctlcluster >/dev/null; then
  if ! pg_lsclusters -h | awk -v c="$CLUSTER" '$1==15 && $2==c' | grep -q .; then
    pg_createcluster 15 "$CLUSTER" --port "$PGPORT" >&2
  fi
  if ! pg_lsclusters -h | awk -v c="$CLUSTER" '$1==15 && $2==c' | grep -q online; then
    pg_ctlcluster --skip-systemctl-redirect 15 "$CLUSTER" start >&2
  fi
  for _ in $(seq 1 30); do
    su postgres -c "pg_isready -q -p $PGPORT" && break
    sleep 1
  done
  psql_admin "-c \"DO \\\$\\\$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname='cadencia_admin') THEN CREATE ROLE cadencia_admin LOGIN SUPERUSER PASSWORD '$PGPASS'; ELSE ALTER ROLE cadencia_admin LOGIN SUPERUSER PASSWORD '$PGPASS'; END IF; END\\\$\\\$;\"" >&2
  if [ -z "$(psql_admin "-c \"SELECT 1 FROM pg_database WHERE datname='cadencia_test'\"")" ]; then
    psql_admin "-c 'CREATE DATABASE cadencia_test OWNER cadencia_admin'" >&2
  fi
  echo "postgresql://cadencia_admin:$PGPASS@127.0.0.1:$PGPORT/cadencia_test"
else
  echo "start-postgres.sh: needs root and Debian's postgresql-15 (pg_ctlcluster)" >&2
  exit 1
fi
