-- A conversation belongs to one customer: the channel names it (cliente_id) on the first
-- message, and the tools refuse every order or client of another customer. NULL only for a
-- conversation no message has named a customer for yet.
ALTER TABLE conversations ADD COLUMN cliente_id TEXT;

-- The channel role: a customer channel's token, which may only post customer messages.
-- SQLite cannot change a CHECK constraint in place: the table is rebuilt with the new one.
CREATE TABLE operators_v2 (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    role        TEXT NOT NULL CHECK (role IN ('channel', 'viewer', 'operator', 'admin')),
    salt        TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    revoked_at  TEXT
);
INSERT INTO operators_v2 (id, name, role, salt, secret_hash, created_at, revoked_at)
    SELECT id, name, role, salt, secret_hash, created_at, revoked_at FROM operators;
DROP TABLE operators;
ALTER TABLE operators_v2 RENAME TO operators;
CREATE UNIQUE INDEX IF NOT EXISTS operators_live_name_idx ON operators (name)
    WHERE revoked_at IS NULL;
