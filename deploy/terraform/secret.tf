# Customer-managed key of the gateway secret; the refund role gets kms:Decrypt on
# it only through Secrets Manager (kms:ViaService), nothing else does.
resource "aws_kms_key" "gateway_pagamento" {
  description             = "Cadencia agent: payment gateway secret"
  deletion_window_in_days = 30
  enable_key_rotation     = true
}

resource "aws_kms_alias" "gateway_pagamento" {
  name          = "alias/cadencia-gateway-pagamento"
  target_key_id = aws_kms_key.gateway_pagamento.key_id
}

# Only emitir-reembolso's role may read this secret (see iam.tf); its value is set
# out of band, never in Terraform state.
resource "aws_secretsmanager_secret" "gateway_pagamento" {
  name                    = "cadencia/gateway-pagamento"
  description             = "Payment gateway credentials used by emitir-reembolso only"
  kms_key_id              = aws_kms_key.gateway_pagamento.arn
  recovery_window_in_days = 7
}
