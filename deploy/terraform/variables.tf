variable "regiao" {
  description = "AWS region of the deployment."
  type        = string
  default     = "us-east-1"
}

variable "cluster_erp" {
  description = "Identifier of the existing Aurora PostgreSQL cluster holding pedidos and clientes (IAM database authentication enabled)."
  type        = string
}

variable "topico_alarmes_arn" {
  description = "ARN of the SNS topic that pages the on-call when the teto de voltas interrupts a tool."
  type        = string
}

variable "pacote_consultar_status" {
  description = "Path of the deployment package (zip) of consultar-status-pedido."
  type        = string
}

variable "pacote_emitir_reembolso" {
  description = "Path of the deployment package (zip) of emitir-reembolso."
  type        = string
}

variable "pacote_atualizar_cadastro" {
  description = "Path of the deployment package (zip) of atualizar-cadastro."
  type        = string
}

variable "retencao_logs_dias" {
  description = "Retention of the functions' CloudWatch log groups, in days."
  type        = number
  default     = 90
}

variable "limiar_interrupcoes" {
  description = "InterrupcoesPorTeto per tool within 5 minutes that raises the alarm."
  type        = number
  default     = 1
}
