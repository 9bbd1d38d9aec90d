-- Each ledger claim names the payment gateway it went to (its URL without credentials or
-- query, or the local simulator's journal), so reconcile asks that gateway and no other.
-- NULL: a claim that asks no gateway, or one made before this column.
ALTER TABLE ledger_records ADD COLUMN gateway TEXT;
