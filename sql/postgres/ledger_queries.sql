-- The guard's hot path on PostgreSQL: the ceiling's bounded increment and the read of the
-- claim it may meet in ONE round trip (the record's columns are NULL when there is none).
-- The read sees what was committed when the statement began; a claim committed by another
-- writer just after is caught by the insert's ON CONFLICT and read again.

-- name: ledger_counter_bump_get
WITH bump AS (
    INSERT INTO ledger_counters (chave, attempts, blocked, updated_at)
    VALUES (%(chave)s, 1, 0, %(now)s)
    ON CONFLICT (chave) DO UPDATE SET
        blocked = ledger_counters.blocked
            + CASE WHEN ledger_counters.attempts >= %(teto)s THEN 1 ELSE 0 END,
        attempts = CASE WHEN ledger_counters.attempts < %(teto)s
            THEN ledger_counters.attempts + 1 ELSE ledger_counters.attempts END,
        updated_at = %(now)s
    RETURNING attempts, blocked
)
SELECT bump.attempts, bump.blocked,
       r.chave, r.ferramenta, r.conversa_id, r.entidade_id, r.status, r.payload_hash,
       r.valor, r.resultado, r.lease_until, r.created_at, r.updated_at, r.gateway
FROM bump LEFT JOIN ledger_records AS r ON r.chave = %(claim)s
