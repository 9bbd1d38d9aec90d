-- Named queries shared by SQLite and PostgreSQL. Dialect files override by name.

-- name: event_append
INSERT INTO events (type, ts, project_id, session_id, agent, payload)
VALUES (%(type)s, %(ts)s, %(project_id)s, %(session_id)s, %(agent)s, %(payload)s)
RETURNING id

-- name: events_after
SELECT id, type, ts, project_id, session_id, agent, payload
FROM events WHERE id > %(after)s ORDER BY id LIMIT %(limit)s

-- name: events_after_upto
-- A page of the log below a settled horizon (PostgreSQL readers, see EventLog.after).
SELECT id, type, ts, project_id, session_id, agent, payload
FROM events WHERE id > %(after)s AND id <= %(upto)s ORDER BY id LIMIT %(limit)s

-- name: events_between
SELECT id, type, ts, project_id, session_id, agent, payload
FROM events WHERE id > %(after)s AND id <= %(until)s ORDER BY id

-- name: events_of_agent
SELECT id, type, ts, project_id, session_id, agent, payload
FROM events WHERE session_id = %(session_id)s AND agent = %(agent)s AND type = %(type)s ORDER BY id

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
     lease_until, created_at, updated_at, gateway)
VALUES (%(chave)s, %(ferramenta)s, %(conversa_id)s, %(entidade_id)s, 'tentando',
        %(payload_hash)s, %(valor)s, NULL, %(lease_until)s, %(now)s, %(now)s, %(gateway)s)
ON CONFLICT (chave) DO NOTHING
RETURNING chave

-- name: ledger_record_get
SELECT chave, ferramenta, conversa_id, entidade_id, status, payload_hash, valor, resultado,
       lease_until, created_at, updated_at, gateway
FROM ledger_records WHERE chave = %(chave)s

-- name: ledger_record_retake
UPDATE ledger_records
SET status = 'tentando', conversa_id = %(conversa_id)s, payload_hash = %(payload_hash)s,
    valor = %(valor)s, gateway = %(gateway)s, resultado = NULL, lease_until = %(lease_until)s,
    updated_at = %(now)s
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

-- name: ledger_records_counts
SELECT status, COUNT(*) AS n FROM ledger_records GROUP BY status

-- name: ledger_records_by_status
SELECT chave, ferramenta, conversa_id, entidade_id, status, payload_hash, valor, resultado,
       lease_until, created_at, updated_at, gateway
FROM ledger_records WHERE status = %(status)s ORDER BY created_at

-- name: interruption_open
INSERT INTO interruptions
    (conversa_id, entidade_id, ferramenta, motivo, argumentos, attempts, status, opened_at, updated_at)
VALUES (%(conversa_id)s, %(entidade_id)s, %(ferramenta)s, %(motivo)s, %(argumentos)s,
        %(attempts)s, 'open', %(now)s, %(now)s)
ON CONFLICT (conversa_id, entidade_id, ferramenta, motivo) WHERE status <> 'resolved' DO NOTHING
RETURNING id

-- name: interruption_touch
UPDATE interruptions SET attempts = %(attempts)s, updated_at = %(now)s
WHERE conversa_id = %(conversa_id)s AND entidade_id = %(entidade_id)s
  AND ferramenta = %(ferramenta)s AND motivo = %(motivo)s AND status <> 'resolved'

-- name: interruption_find
SELECT id FROM interruptions
WHERE conversa_id = %(conversa_id)s AND entidade_id = %(entidade_id)s
  AND ferramenta = %(ferramenta)s AND motivo = %(motivo)s AND status <> 'resolved'

-- name: interruption_get
SELECT id, conversa_id, entidade_id, ferramenta, motivo, argumentos, attempts, status,
       claimed_by, resolution, reply, outcome, grant_total, grant_used, opened_at, updated_at,
       claimed_at
FROM interruptions WHERE id = %(id)s

-- name: interruptions_unresolved
SELECT id, conversa_id, entidade_id, ferramenta, motivo, argumentos, attempts, status,
       claimed_by, resolution, reply, outcome, grant_total, grant_used, opened_at, updated_at,
       claimed_at
FROM interruptions WHERE status <> 'resolved' ORDER BY id

-- name: interruption_claim
UPDATE interruptions SET status = 'claimed', claimed_by = %(operator)s, claimed_at = %(now)s,
    updated_at = %(now)s
WHERE id = %(id)s AND status = 'open'

-- name: interruption_release
-- The holder gives the takeover back to the queue: open again, nobody's.
UPDATE interruptions SET status = 'open', claimed_by = NULL, claimed_at = NULL,
    updated_at = %(now)s
WHERE id = %(id)s AND status = 'claimed' AND claimed_by = %(operator)s

-- name: interruption_resolve
UPDATE interruptions
SET status = 'resolved', resolution = %(resolution)s, reply = %(reply)s, outcome = %(outcome)s,
    updated_at = %(now)s
WHERE id = %(id)s AND status = 'claimed' AND claimed_by = %(operator)s

-- name: interruption_latest_for
SELECT id, conversa_id, entidade_id, ferramenta, motivo, argumentos, attempts, status,
       claimed_by, resolution, reply, outcome, grant_total, grant_used, opened_at, updated_at,
       claimed_at
FROM interruptions
WHERE conversa_id = %(conversa_id)s AND entidade_id = %(entidade_id)s
  AND ferramenta = %(ferramenta)s
ORDER BY id DESC LIMIT 1

-- name: interruption_grant
UPDATE interruptions SET grant_total = grant_total + %(attempts)s, updated_at = %(now)s
WHERE id = %(id)s AND status = 'resolved'

-- name: interruption_grant_use
UPDATE interruptions SET grant_used = grant_used + 1, updated_at = %(now)s
WHERE id = %(id)s AND status = 'resolved' AND grant_used < grant_total
RETURNING id

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

-- name: project_insert
INSERT INTO projects (id, name, repo_path, module_map, execution_activated, created_at)
VALUES (%(id)s, %(name)s, %(repo_path)s, %(module_map)s, %(execution_activated)s, %(now)s)

-- name: project_get
SELECT id, name, repo_path, module_map, execution_activated, created_at FROM projects WHERE id = %(id)s

-- name: projects_all
SELECT id, name, repo_path, module_map, execution_activated, created_at FROM projects ORDER BY created_at

-- name: project_set_repo
UPDATE projects SET repo_path = %(repo)s WHERE id = %(id)s

-- name: project_set_module_map
UPDATE projects SET module_map = %(module_map)s WHERE id = %(id)s

-- name: project_activate
UPDATE projects SET execution_activated = %(yes)s WHERE id = %(id)s AND execution_activated = %(no)s

-- name: session_insert
INSERT INTO sessions (id, project_id, title, created_at) VALUES (%(id)s, %(project_id)s, %(title)s, %(now)s)

-- name: session_get
SELECT id, project_id, title, created_at FROM sessions WHERE id = %(id)s

-- name: sessions_of
SELECT id, project_id, title, created_at FROM sessions WHERE project_id = %(project_id)s ORDER BY created_at

-- name: handoff_insert
INSERT INTO handoffs (id, project_id, session_id, from_agent, to_agent, status, note, offered_at)
VALUES (%(id)s, %(project_id)s, %(session_id)s, %(from_agent)s, %(to_agent)s, 'offered', %(note)s, %(now)s)
ON CONFLICT (session_id, from_agent, to_agent) DO NOTHING
RETURNING id

-- name: handoff_get
SELECT id, project_id, session_id, from_agent, to_agent, status, note, offered_at, accepted_at,
       accepted_by, declined_at, declined_by, decline_reason
FROM handoffs WHERE id = %(id)s

-- name: handoffs_of_project
SELECT id, project_id, session_id, from_agent, to_agent, status, note, offered_at, accepted_at,
       accepted_by, declined_at, declined_by, decline_reason
FROM handoffs WHERE project_id = %(project_id)s ORDER BY offered_at

-- name: handoffs_all
SELECT id, project_id, session_id, from_agent, to_agent, status, note, offered_at, accepted_at,
       accepted_by, declined_at, declined_by, decline_reason
FROM handoffs ORDER BY offered_at

-- name: handoff_accept
UPDATE handoffs SET status = 'accepted', accepted_at = %(now)s, accepted_by = %(operator)s
WHERE id = %(id)s AND status = 'offered'

-- name: handoff_decline
UPDATE handoffs SET status = 'declined', declined_at = %(now)s, declined_by = %(operator)s,
       decline_reason = %(reason)s
WHERE id = %(id)s AND status = 'offered'

-- name: autonomy_upsert
INSERT INTO agent_autonomy (project_id, agent, action, value)
VALUES (%(project_id)s, %(agent)s, %(action)s, %(value)s)
ON CONFLICT (project_id, agent, action) DO UPDATE SET value = EXCLUDED.value

-- name: autonomy_of_project
SELECT agent, action, value FROM agent_autonomy WHERE project_id = %(project_id)s

-- name: approval_insert
INSERT INTO approvals (id, project_id, session_id, agent, action, payload, status, created_at,
                       stage, rule)
VALUES (%(id)s, %(project_id)s, %(session_id)s, %(agent)s, %(action)s, %(payload)s, 'pending',
        %(now)s, %(stage)s, %(rule)s)

-- name: approval_get
SELECT id, project_id, session_id, agent, action, payload, status, created_at, decided_by,
       decided_at, stage, rule, reason, result, claimed_by, claimed_at
FROM approvals WHERE id = %(id)s

-- name: approvals_pending
SELECT id, project_id, session_id, agent, action, payload, status, created_at, decided_by,
       decided_at, stage, rule, reason, result, claimed_by, claimed_at
FROM approvals WHERE status = 'pending' ORDER BY created_at

-- name: approval_claim
-- One operator executes an approved action: the claim is taken while the approval is still
-- pending, and a claim older than the lease (a crash while executing) can be taken again.
UPDATE approvals SET claimed_by = %(operator)s, claimed_at = %(now)s
WHERE id = %(id)s AND status = 'pending'
  AND (claimed_by IS NULL OR claimed_at < %(stale_before)s)

-- name: approval_release
UPDATE approvals SET claimed_by = NULL, claimed_at = NULL
WHERE id = %(id)s AND status = 'pending' AND claimed_by = %(operator)s

-- name: approval_decide
UPDATE approvals SET status = %(status)s, decided_by = %(operator)s, decided_at = %(now)s,
       reason = %(reason)s, result = %(result)s
WHERE id = %(id)s AND status = 'pending'
  AND (claimed_by IS NULL OR claimed_by = %(operator)s OR claimed_at < %(stale_before)s)

-- ==== pull requests ====
-- Every PR (infra, dev, adr) and its gate history. Every gate move is a conditional UPDATE
-- on the expected (status, correction count): two writers racing on one PR cannot both win.

-- name: pr_insert
INSERT INTO pull_requests
    (id, kind, project_id, session_id, task_id, author, title, branch, pr_id, pr_url, head,
     files, findings, gate_status, gate_correction_count, blocked, blocked_reason, created_at,
     updated_at)
VALUES (%(id)s, %(kind)s, %(project_id)s, %(session_id)s, %(task_id)s, %(author)s, %(title)s,
        %(branch)s, %(pr_id)s, %(pr_url)s, %(head)s, %(files)s, %(findings)s, %(gate_status)s,
        0, %(blocked)s, NULL, %(now)s, %(now)s)

-- name: pr_get
SELECT id, kind, project_id, session_id, task_id, author, title, branch, pr_id, pr_url, head,
       files, findings, gate_status, gate_correction_count, blocked, blocked_reason, created_at,
       updated_at
FROM pull_requests WHERE id = %(id)s

-- name: pr_infra_of_session
SELECT id, kind, project_id, session_id, task_id, author, title, branch, pr_id, pr_url, head,
       files, findings, gate_status, gate_correction_count, blocked, blocked_reason, created_at,
       updated_at
FROM pull_requests WHERE kind = 'infra' AND session_id = %(session_id)s

-- name: pr_of_task
SELECT id, kind, project_id, session_id, task_id, author, title, branch, pr_id, pr_url, head,
       files, findings, gate_status, gate_correction_count, blocked, blocked_reason, created_at,
       updated_at
FROM pull_requests WHERE task_id = %(task_id)s

-- name: pr_adr_keys_of_project
-- Every ADR PR's key, whatever its state: an ADR number is never handed out twice.
SELECT task_id FROM pull_requests WHERE kind = 'adr' AND project_id = %(project_id)s

-- name: prs_in_review
SELECT id, kind, project_id, session_id, task_id, author, title, branch, pr_id, pr_url, head,
       files, findings, gate_status, gate_correction_count, blocked, blocked_reason, created_at,
       updated_at
FROM pull_requests
WHERE gate_status NOT IN ('merged', 'closed')
  AND (CAST(%(project_id)s AS TEXT) IS NULL OR project_id = %(project_id)s)
  AND (CAST(%(kind)s AS TEXT) IS NULL OR kind = %(kind)s)
ORDER BY created_at, id

-- name: pr_transition
UPDATE pull_requests
SET gate_status = %(to_status)s, gate_correction_count = %(to_count)s, blocked = %(blocked)s,
    blocked_reason = %(blocked_reason)s, findings = %(findings)s, head = %(head)s,
    files = %(files)s, updated_at = %(now)s
WHERE id = %(key)s AND gate_status = %(from_status)s
  AND gate_correction_count = %(from_count)s

-- name: gate_history_insert
INSERT INTO gate_history (subject, from_status, to_status, actor, note, ts)
VALUES (%(subject)s, %(from_status)s, %(to_status)s, %(actor)s, %(note)s, %(now)s)

-- name: gate_history_of
SELECT id, subject, from_status, to_status, actor, note, ts
FROM gate_history WHERE subject = %(subject)s ORDER BY id

-- name: events_of_session_type
SELECT id, type, ts, project_id, session_id, agent, payload
FROM events WHERE session_id = %(session_id)s AND type = %(type)s ORDER BY id
