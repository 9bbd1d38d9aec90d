#!/usr/bin/env bash
# Start a local PostgreSQL for the test suite and print the admin URL to use.
# Debian's postgresql-15 cluster when running as root; otherwise a private initdb cluster.
set -euo pipefail
PGPASS="${CADENCIA_TEST_PG_PASSWORD:-cadencia-test}"
PGPORT="${CADENCIA_TEST_PG_PORT:-5432}"

psql_admin() { su postgres -c "psql -v ON_ERROR_STOP=1 -qAt -p $PGPORT $*"; }

if [ "$(id -u)" = 0 ] && command -v pg_ctlcluster >/dev/null; then
  if ! pg_lsclusters -h | awk '$1==15 && $2=="main"' | grep -q online; then
    pg_ctlcluster --skip-systemctl-redirect 15 main start >&2
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
