-- Core state: event log, idempotency ledger, human takeovers, conversations, ERP.
CREATE TABLE IF NOT EXISTS events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    type        TEXT NOT NULL,
    ts          TEXT NOT NULL,
    project_id  TEXT,
    session_id  TEXT,
    agent       TEXT,
    payload     TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS events_session_idx ON events (session_id, id);

CREATE TABLE IF NOT EXISTS ledger_counters (
    chave       TEXT PRIMARY KEY,
    attempts    INTEGER NOT NULL,
    blocked     INTEGER NOT NULL DEFAULT 0,
    updated_at  TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS ledger_records (
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
);
CREATE INDEX IF NOT EXISTS ledger_records_status_idx ON ledger_records (status);

CREATE TABLE IF NOT EXISTS interruptions (
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
    updated_at   TEXT NOT NULL,
    UNIQUE (conversa_id, entidade_id, ferramenta, motivo)
);

CREATE TABLE IF NOT EXISTS conversation_messages (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    conversa_id  TEXT NOT NULL,
    role         TEXT NOT NULL,
    text         TEXT NOT NULL,
    ts           TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS conversation_messages_idx ON conversation_messages (conversa_id, id);

CREATE TABLE IF NOT EXISTS clientes (
    id        TEXT PRIMARY KEY,
    nome      TEXT NOT NULL,
    endereco  TEXT,
    telefone  TEXT,
    email     TEXT
);

CREATE TABLE IF NOT EXISTS pedidos (
    id                 TEXT PRIMARY KEY,
    cliente_id         TEXT REFERENCES clientes (id),
    status             TEXT NOT NULL DEFAULT 'entregue',
    valor_pedido       TEXT NOT NULL,
    status_reembolso   TEXT,
    valor_reembolsado  TEXT,
    criado_em          TEXT NOT NULL
);
