-- The guard's hot path on SQLite: the ceiling's bounded increment and the read of the claim
-- it may meet, in ONE statement (its RETURNING reads the record as one JSON object, with
-- resultado nested as JSON, not a string to decode twice), so a blocked attempt costs one
-- upsert and the event's insert inside its single commit.

-- name: ledger_counter_bump_get
INSERT INTO ledger_counters (chave, attempts, blocked, updated_at)
VALUES (%(chave)s, 1, 0, %(now)s)
ON CONFLICT (chave) DO UPDATE SET
    blocked = ledger_counters.blocked
        + CASE WHEN ledger_counters.attempts >= %(teto)s THEN 1 ELSE 0 END,
    attempts = CASE WHEN ledger_counters.attempts < %(teto)s
        THEN ledger_counters.attempts + 1 ELSE ledger_counters.attempts END,
    updated_at = %(now)s
RETURNING attempts, blocked,
    (SELECT json_object(
        'chave', r.chave, 'ferramenta', r.ferramenta, 'conversa_id', r.conversa_id,
        'entidade_id', r.entidade_id, 'status', r.status, 'payload_hash', r.payload_hash,
        'valor', r.valor, 'resultado', json(r.resultado), 'lease_until', r.lease_until,
        'created_at', r.created_at, 'updated_at', r.updated_at, 'gateway', r.gateway)
     FROM ledger_records AS r WHERE r.chave = %(claim)s) AS existing
