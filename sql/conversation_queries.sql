-- Conversation state (bot | human) and the outbound delivery journal.

-- name: conversation_set_state
INSERT INTO conversations (id, state, operator, updated_at)
VALUES (%(conversa_id)s, %(state)s, %(operator)s, %(now)s)
ON CONFLICT (id) DO UPDATE
SET state = EXCLUDED.state, operator = EXCLUDED.operator, updated_at = EXCLUDED.updated_at

-- name: conversation_state
SELECT state, operator, cliente_id FROM conversations WHERE id = %(conversa_id)s

-- name: conversation_bind_customer
-- The first customer named wins, even against a concurrent first message: the answer is the
-- conversation's customer, which the caller compares with the one it gave.
INSERT INTO conversations (id, state, operator, cliente_id, updated_at)
VALUES (%(conversa_id)s, 'bot', NULL, %(cliente_id)s, %(now)s)
ON CONFLICT (id) DO UPDATE
SET cliente_id = COALESCE(conversations.cliente_id, EXCLUDED.cliente_id)
RETURNING cliente_id

-- name: conversation_owns_pedido
-- The order exists and is the conversation's customer's: an unknown order and another
-- customer's give the same empty answer.
SELECT 1 AS owned FROM conversations c JOIN pedidos p ON p.cliente_id = c.cliente_id
WHERE c.id = %(conversa_id)s AND p.id = %(entidade)s

-- name: conversation_owns_cliente
SELECT 1 AS owned FROM conversations c JOIN clientes k ON k.id = c.cliente_id
WHERE c.id = %(conversa_id)s AND k.id = %(entidade)s

-- name: conversation_known
SELECT 1 AS known FROM conversations WHERE id = %(conversa_id)s
UNION ALL
SELECT 1 AS known FROM conversation_messages WHERE conversa_id = %(conversa_id)s
LIMIT 1

-- name: conversation_messages_delivery
SELECT m.id, m.role, m.text, m.ts, d.status, d.attempts, d.last_error, d.delivered_at
FROM conversation_messages m
LEFT JOIN message_deliveries d ON d.message_id = m.id
WHERE m.conversa_id = %(conversa_id)s
ORDER BY m.id

-- name: delivery_enqueue
INSERT INTO message_deliveries
    (message_id, conversa_id, idempotency_key, status, attempts, created_at, updated_at)
VALUES (%(message_id)s, %(conversa_id)s, %(key)s, 'pending', 0, %(now)s, %(now)s)

-- name: delivery_get
SELECT d.message_id, d.conversa_id, d.idempotency_key, d.status, d.attempts, d.last_error,
       d.delivered_at, m.role, m.text, m.ts
FROM message_deliveries d
JOIN conversation_messages m ON m.id = d.message_id
WHERE d.message_id = %(message_id)s

-- name: deliveries_pending
SELECT message_id FROM message_deliveries WHERE status = 'pending' ORDER BY message_id

-- name: deliveries_pending_rows
-- Every pending delivery with its message, in order (a conversation's go out in order).
SELECT d.message_id, d.conversa_id, d.idempotency_key, d.attempts, d.next_at, d.created_at,
       m.role, m.text, m.ts
FROM message_deliveries d
JOIN conversation_messages m ON m.id = d.message_id
WHERE d.status = 'pending'
ORDER BY d.message_id

-- name: delivery_record_attempt
-- A transient failure: counted, and not tried again before next_at (epoch seconds).
UPDATE message_deliveries
SET attempts = attempts + 1, last_error = %(error)s, next_at = %(next_at)s, updated_at = %(now)s
WHERE message_id = %(message_id)s AND status = 'pending'

-- name: delivery_finish
-- Closes a delivery with its last attempt, which this counts.
UPDATE message_deliveries
SET status = %(status)s, attempts = attempts + 1, last_error = %(error)s, updated_at = %(now)s,
    delivered_at = %(delivered_at)s
WHERE message_id = %(message_id)s AND status = 'pending'
