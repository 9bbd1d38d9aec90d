-- One OPEN takeover per (conversa, entidade, ferramenta, motivo): once resolved, a later
-- attempt stopped again opens a new one.
DO $$
DECLARE c record;
BEGIN
    FOR c IN SELECT conname FROM pg_constraint
             WHERE conrelid = 'interruptions'::regclass AND contype = 'u'
    LOOP
        EXECUTE format('ALTER TABLE interruptions DROP CONSTRAINT %I', c.conname);
    END LOOP;
END $$;
CREATE UNIQUE INDEX IF NOT EXISTS interruptions_one_open_idx
    ON interruptions (conversa_id, entidade_id, ferramenta, motivo) WHERE status <> 'resolved';
