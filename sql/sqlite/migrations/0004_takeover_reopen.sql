-- One OPEN takeover per (conversa, entidade, ferramenta, motivo): once resolved, a later
-- attempt stopped again opens a new one. SQLite cannot drop a table constraint, so the
-- table is rebuilt with a partial unique index instead.
CREATE TABLE interruptions_new (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    conversa_id  TEXT NOT NULL,
    entidade_id  TEXT NOT NULL,
    ferramenta   TEXT NOT NULL,
    motivo       TEXT NOT NULL,
    argumentos   TEXT NOT NULL DEFAULT '{}',
    attempts     INTEGER NOT NULL,
    status       TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open','claimed','resolved')),
    claimed_by   TEXT,
    resolution   TEXT,
    reply        TEXT,
    opened_at    TEXT NOT NULL,
    updated_at   TEXT NOT NULL
);
INSERT INTO interruptions_new SELECT id, conversa_id, entidade_id, ferramenta, motivo, argumentos,
    attempts, status, claimed_by, resolution, reply, opened_at, updated_at FROM interruptions;
DROP TABLE interruptions;
ALTER TABLE interruptions_new RENAME TO interruptions;
CREATE UNIQUE INDEX interruptions_one_open_idx
    ON interruptions (conversa_id, entidade_id, ferramenta, motivo) WHERE status <> 'resolved';
