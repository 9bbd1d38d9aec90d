-- When the holder of a claimed takeover claimed it (NULL while open): how long it has been
-- held, for the shift view. A takeover claimed before this column existed shows its last
-- change instead.
ALTER TABLE interruptions ADD COLUMN claimed_at TEXT;
UPDATE interruptions SET claimed_at = updated_at WHERE status = 'claimed';
