-- Nothing to do on SQLite: one process appends and its listeners are in-process (PostgreSQL's
-- 0018 names the NOTIFY channel other serve processes listen on).
SELECT 1;
