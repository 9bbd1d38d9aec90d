output "ledger_table_name" {
  description = "DynamoDB ledger table (CADENCIA_LEDGER_URL=dynamodb://<this>?region=...)."
  value       = aws_dynamodb_table.execucoes.name
}

output "gateway_secret_arn" {
  description = "ARN of the payment gateway secret (readable by emitir-reembolso only)."
  value       = aws_secretsmanager_secret.gateway_pagamento.arn
}

output "tool_role_arns" {
  description = "IAM role of each tool."
  value = {
    consultar-status-pedido = aws_iam_role.agente_consulta.arn
    emitir-reembolso        = aws_iam_role.agente_reembolso.arn
    atualizar-cadastro      = aws_iam_role.agente_cadastro.arn
  }
}
