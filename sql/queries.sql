-- Named queries shared by SQLite and PostgreSQL. Dialect files override by name.

-- name: event_lock
SELECT 1

-- name: event_append
INSERT INTO events (type, ts, project_id, session_id, agent, payload)
VALUES (%(type)s, %(ts)s, %(project_id)s, %(session_id)s, %(agent)s, %(payload)s)
RETURNING id

-- name: events_after
SELECT id, type, ts, project_id, session_id, agent, payload
FROM events WHERE id > %(after)s ORDER BY id LIMIT %(limit)s

-- name: events_between
SELECT id, type, ts, project_id, session_id, agent, payload
FROM events WHERE id > %(after)s AND id <= %(until)s ORDER BY id

-- name: events_last_id
SELECT COALESCE(MAX(id), 0) AS last_id FROM events

-- name: ledger_counter_bump
INSERT INTO ledger_counters (chave, attempts, blocked, updated_at)
VALUES (%(chave)s, 1, 0, %(now)s)
ON CONFLICT (chave) DO UPDATE SET
    blocked = ledger_counters.blocked
        + CASE WHEN ledger_counters.attempts >= %(teto)s THEN 1 ELSE 0 END,
    attempts = CASE WHEN ledger_counters.attempts < %(teto)s
        THEN ledger_counters.attempts + 1 ELSE ledger_counters.attempts END,
    updated_at = %(now)s
RETURNING attempts, blocked

-- name: ledger_counter_get
SELECT chave, attempts, blocked FROM ledger_counters WHERE chave = %(chave)s

-- name: ledger_record_insert
INSERT INTO ledger_records
    (chave, ferramenta, conversa_id, entidade_id, status, payload_hash, valor, resultado,
     lease_until, created_at, updated_at)
VALUES (%(chave)s, %(ferramenta)s, %(conversa_id)s, %(entidade_id)s, 'tentando',
        %(payload_hash)s, %(valor)s, NULL, %(lease_until)s, %(now)s, %(now)s)
ON CONFLICT (chave) DO NOTHING
RETURNING chave

-- name: ledger_record_get
SELECT chave, ferramenta, conversa_id, entidade_id, status, payload_hash, valor, resultado,
       lease_until, created_at, updated_at
FROM ledger_records WHERE chave = %(chave)s

-- name: ledger_record_retake
UPDATE ledger_records
SET status = 'tentando', conversa_id = %(conversa_id)s, payload_hash = %(payload_hash)s,
    valor = %(valor)s, resultado = NULL, lease_until = %(lease_until)s, updated_at = %(now)s
WHERE chave = %(chave)s AND status = 'falhou'
RETURNING chave

-- name: ledger_record_finish
UPDATE ledger_records
SET status = %(status)s, resultado = %(resultado)s, updated_at = %(now)s
WHERE chave = %(chave)s AND status = %(expected)s
RETURNING chave

-- name: ledger_records_expire
UPDATE ledger_records
SET status = 'resultado_incerto', updated_at = %(now)s
WHERE status = 'tentando' AND lease_until < %(epoch)s
RETURNING chave

-- name: ledger_records_by_status
SELECT chave, ferramenta, conversa_id, entidade_id, status, payload_hash, valor, resultado,
       lease_until, created_at, updated_at
FROM ledger_records WHERE status = %(status)s ORDER BY created_at

-- name: interruption_open
INSERT INTO interruptions
    (conversa_id, entidade_id, ferramenta, motivo, argumentos, attempts, status, opened_at, updated_at)
VALUES (%(conversa_id)s, %(entidade_id)s, %(ferramenta)s, %(motivo)s, %(argumentos)s,
        %(attempts)s, 'open', %(now)s, %(now)s)
ON CONFLICT (conversa_id, entidade_id, ferramenta, motivo) DO NOTHING
RETURNING id

-- name: interruption_touch
UPDATE interruptions SET attempts = %(attempts)s, updated_at = %(now)s
WHERE conversa_id = %(conversa_id)s AND entidade_id = %(entidade_id)s
  AND ferramenta = %(ferramenta)s AND motivo = %(motivo)s AND status <> 'resolved'

-- name: interruption_get
SELECT id, conversa_id, entidade_id, ferramenta, motivo, argumentos, attempts, status,
       claimed_by, resolution, reply, opened_at, updated_at
FROM interruptions WHERE id = %(id)s

-- name: interruptions_unresolved
SELECT id, conversa_id, entidade_id, ferramenta, motivo, argumentos, attempts, status,
       claimed_by, resolution, reply, opened_at, updated_at
FROM interruptions WHERE status <> 'resolved' ORDER BY id

-- name: interruption_claim
UPDATE interruptions SET status = 'claimed', claimed_by = %(operator)s, updated_at = %(now)s
WHERE id = %(id)s AND status = 'open'

-- name: interruption_resolve
UPDATE interruptions
SET status = 'resolved', resolution = %(resolution)s, reply = %(reply)s, updated_at = %(now)s
WHERE id = %(id)s AND status = 'claimed' AND claimed_by = %(operator)s

-- name: message_append
INSERT INTO conversation_messages (conversa_id, role, text, ts)
VALUES (%(conversa_id)s, %(role)s, %(text)s, %(ts)s)
RETURNING id

-- name: messages_for
SELECT id, conversa_id, role, text, ts FROM conversation_messages
WHERE conversa_id = %(conversa_id)s ORDER BY id

-- name: erp_upsert_cliente
INSERT INTO clientes (id, nome, endereco, telefone, email)
VALUES (%(id)s, %(nome)s, %(endereco)s, %(telefone)s, %(email)s)
ON CONFLICT (id) DO UPDATE SET nome = EXCLUDED.nome

-- name: erp_upsert_pedido
INSERT INTO pedidos (id, cliente_id, status, valor_pedido, criado_em)
VALUES (%(id)s, %(cliente_id)s, %(status)s, %(valor_pedido)s, %(criado_em)s)
ON CONFLICT (id) DO UPDATE SET valor_pedido = EXCLUDED.valor_pedido,
    cliente_id = EXCLUDED.cliente_id

-- name: erp_pedido_admin
SELECT id, cliente_id, status, valor_pedido, status_reembolso, valor_reembolsado, criado_em
FROM pedidos WHERE id = %(id)s

-- name: erp_cliente_admin
SELECT id, nome, endereco, telefone, email FROM clientes WHERE id = %(id)s

-- name: tool_consulta_pedido
SELECT id, status, valor_pedido, status_reembolso, valor_reembolsado FROM pedidos
WHERE id = %(pedido_id)s

-- name: tool_reembolso_ler
SELECT id, valor_pedido FROM pedidos WHERE id = %(pedido_id)s

-- name: tool_reembolso_gravar
UPDATE pedidos SET status_reembolso = 'reembolsado', valor_reembolsado = %(valor)s
WHERE id = %(pedido_id)s
