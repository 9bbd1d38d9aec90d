-- Rendered from backend/erp/grants.py; do not edit by hand.
-- tests/unit/test_grants.py fails if this file and the spec disagree.
REVOKE ALL ON pedidos, clientes FROM cadencia_agente_consulta;
GRANT SELECT ON pedidos TO cadencia_agente_consulta;
GRANT SELECT ON clientes TO cadencia_agente_consulta;
REVOKE ALL ON pedidos, clientes FROM cadencia_agente_reembolso;
GRANT SELECT (id, valor_pedido) ON pedidos TO cadencia_agente_reembolso;
GRANT UPDATE (status_reembolso, valor_reembolsado) ON pedidos TO cadencia_agente_reembolso;
REVOKE ALL ON pedidos, clientes FROM cadencia_agente_cadastro;
GRANT SELECT (id) ON clientes TO cadencia_agente_cadastro;
GRANT UPDATE (endereco, telefone, email) ON clientes TO cadencia_agente_cadastro;
