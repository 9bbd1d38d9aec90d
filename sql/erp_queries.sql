-- What the three tools run against the ERP, each as its own login role (see
-- backend/erp/grants.py): a statement here that reads or writes a column outside the
-- tool's grants fails in the database, on PostgreSQL and on SQLite alike.

-- name: tool_consulta_pedido
SELECT id, status, valor_pedido, status_reembolso, valor_reembolsado FROM pedidos
WHERE id = %(pedido_id)s

-- name: tool_reembolso_ler
SELECT id, valor_pedido FROM pedidos WHERE id = %(pedido_id)s

-- name: tool_reembolso_gravar
UPDATE pedidos SET status_reembolso = 'reembolsado', valor_reembolsado = %(valor)s
WHERE id = %(pedido_id)s

-- name: tool_cadastro_endereco
-- One statement per contact column, run together in one transaction: the cadastro role
-- may not read the columns it writes, so "SET endereco = COALESCE(new, endereco)" fails.
UPDATE clientes SET endereco = %(valor)s WHERE id = %(cliente_id)s

-- name: tool_cadastro_telefone
UPDATE clientes SET telefone = %(valor)s WHERE id = %(cliente_id)s

-- name: tool_cadastro_email
UPDATE clientes SET email = %(valor)s WHERE id = %(cliente_id)s
