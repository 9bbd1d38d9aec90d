-- Cheaper appends (issue 14). Every index of the event log is one more page each append
-- writes and syncs, and events_session_idx (session_id, id) serves no read that
-- events_session_type_idx (session_id, type, id) does not: each session read names its type.
DROP INDEX IF EXISTS events_session_idx;

-- The ledger's tables keyed by a TEXT chave were rowid tables plus an automatic index on
-- the key: two b-trees, two pages per insert. WITHOUT ROWID keeps each row in its key's
-- b-tree alone, so a guarded attempt writes one page for its counter instead of two.
CREATE TABLE ledger_counters_v2 (
    chave       TEXT PRIMARY KEY,
    attempts    INTEGER NOT NULL,
    blocked     INTEGER NOT NULL DEFAULT 0,
    updated_at  TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO ledger_counters_v2 (chave, attempts, blocked, updated_at)
    SELECT chave, attempts, blocked, updated_at FROM ledger_counters;
DROP TABLE ledger_counters;
ALTER TABLE ledger_counters_v2 RENAME TO ledger_counters;

CREATE TABLE ledger_records_v2 (
    chave         TEXT PRIMARY KEY,
    ferramenta    TEXT NOT NULL,
    conversa_id   TEXT NOT NULL,
    entidade_id   TEXT NOT NULL,
    status        TEXT NOT NULL CHECK (status IN ('tentando','executado','falhou','resultado_incerto')),
    payload_hash  TEXT NOT NULL,
    valor         TEXT,
    resultado     TEXT,
    lease_until   REAL NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO ledger_records_v2 (chave, ferramenta, conversa_id, entidade_id, status,
        payload_hash, valor, resultado, lease_until, created_at, updated_at)
    SELECT chave, ferramenta, conversa_id, entidade_id, status, payload_hash, valor, resultado,
        lease_until, created_at, updated_at FROM ledger_records;
DROP TABLE ledger_records;
ALTER TABLE ledger_records_v2 RENAME TO ledger_records;
CREATE INDEX IF NOT EXISTS ledger_records_status_idx ON ledger_records (status);
