-- Loading orders and clients from a seed file (cadencia erp seed, backend/erp/seed.py): the
-- admin's path, in one transaction, never a tool's.

-- name: erp_seed_cliente
-- A contact field the line leaves out keeps what the ERP holds.
INSERT INTO clientes (id, nome, endereco, telefone, email)
VALUES (%(id)s, %(nome)s, %(endereco)s, %(telefone)s, %(email)s)
ON CONFLICT (id) DO UPDATE SET nome = EXCLUDED.nome,
    endereco = COALESCE(EXCLUDED.endereco, clientes.endereco),
    telefone = COALESCE(EXCLUDED.telefone, clientes.telefone),
    email = COALESCE(EXCLUDED.email, clientes.email)

-- name: erp_seed_cliente_known
SELECT 1 AS known FROM clientes WHERE id = %(id)s

-- name: erp_seed_pedido
-- An order already there keeps its refund state: a seed sets what an order is, not what
-- happened to it.
INSERT INTO pedidos (id, cliente_id, status, valor_pedido, criado_em)
VALUES (%(id)s, %(cliente_id)s, %(status)s, %(valor_pedido)s, %(criado_em)s)
ON CONFLICT (id) DO UPDATE SET cliente_id = EXCLUDED.cliente_id,
    status = EXCLUDED.status, valor_pedido = EXCLUDED.valor_pedido
