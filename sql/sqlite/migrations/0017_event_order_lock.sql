-- Nothing to do on SQLite: one writer at a time commits in id order, so the event log needs
-- no ordering lock (PostgreSQL's 0017 replaces its advisory lock by a table lock).
SELECT 1;
