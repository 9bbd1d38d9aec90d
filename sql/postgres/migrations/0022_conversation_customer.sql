-- A conversation belongs to one customer: the channel names it (cliente_id) on the first
-- message, and the tools refuse every order or client of another customer. NULL only for a
-- conversation no message has named a customer for yet.
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS cliente_id TEXT;

-- The channel role: a customer channel's token, which may only post customer messages.
ALTER TABLE operators DROP CONSTRAINT IF EXISTS operators_role_check;
ALTER TABLE operators ADD CONSTRAINT operators_role_check
    CHECK (role IN ('channel', 'viewer', 'operator', 'admin'));
