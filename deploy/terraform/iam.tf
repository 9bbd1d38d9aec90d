# One role per tool, each holding exactly the actions its tool calls:
#   rds-db:connect        as its OWN database user only (dbuser ARN, no wildcard);
#   dynamodb GetItem, PutItem, UpdateItem on the ledger table only: UpdateItem is
#                         the teto de voltas counter's atomic increment, PutItem the
#                         idempotency claim, GetItem/UpdateItem read and complete it;
#   logs                  writes to its own function's log group;
#   secretsmanager        emitir-reembolso only, on the gateway secret only.
# `cadencia audit iam deploy/terraform` checks these invariants in CI.

# -- Ferramenta 1: consultar-status-pedido (read only) --
resource "aws_iam_role" "agente_consulta" {
  name               = "cadencia-agente-consulta-role"
  assume_role_policy = data.aws_iam_policy_document.confianca_lambda.json
  tags               = { ferramenta = "consultar-status-pedido" }
}

data "aws_iam_policy_document" "agente_consulta" {
  statement {
    sid       = "ConectarComoUsuarioProprio"
    effect    = "Allow"
    actions   = ["rds-db:connect"]
    resources = ["${local.dbuser_arn_prefix}/cadencia_agente_consulta"]
  }

  statement {
    sid       = "LedgerTetoEIdempotencia"
    effect    = "Allow"
    actions   = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"]
    resources = [local.ledger_arn]
  }

  statement {
    sid       = "LogsDaPropriaFuncao"
    effect    = "Allow"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.consultar_status.arn}:*"]
  }
}

resource "aws_iam_role_policy" "agente_consulta" {
  name   = "cadencia-agente-consulta"
  role   = aws_iam_role.agente_consulta.id
  policy = data.aws_iam_policy_document.agente_consulta.json
}

# -- Ferramenta 2: emitir-reembolso (irreversible: the most restricted) --
resource "aws_iam_role" "agente_reembolso" {
  name               = "cadencia-agente-reembolso-role"
  assume_role_policy = data.aws_iam_policy_document.confianca_lambda.json
  tags               = { ferramenta = "emitir-reembolso" }
}

data "aws_iam_policy_document" "agente_reembolso" {
  statement {
    sid       = "ConectarComoUsuarioProprio"
    effect    = "Allow"
    actions   = ["rds-db:connect"]
    resources = ["${local.dbuser_arn_prefix}/cadencia_agente_reembolso"]
  }

  statement {
    sid       = "LedgerTetoEIdempotencia"
    effect    = "Allow"
    actions   = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"]
    resources = [local.ledger_arn]
  }

  statement {
    sid       = "LogsDaPropriaFuncao"
    effect    = "Allow"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.emitir_reembolso.arn}:*"]
  }

  # The only statement in this directory that reaches the gateway secret.
  statement {
    sid       = "LerSegredoDoGateway"
    effect    = "Allow"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = [aws_secretsmanager_secret.gateway_pagamento.arn]
  }

  statement {
    sid       = "DecifrarSegredoDoGateway"
    effect    = "Allow"
    actions   = ["kms:Decrypt"]
    resources = [aws_kms_key.gateway_pagamento.arn]

    condition {
      test     = "StringEquals"
      variable = "kms:ViaService"
      values   = ["secretsmanager.${data.aws_region.current.name}.amazonaws.com"]
    }
  }
}

resource "aws_iam_role_policy" "agente_reembolso" {
  name   = "cadencia-agente-reembolso"
  role   = aws_iam_role.agente_reembolso.id
  policy = data.aws_iam_policy_document.agente_reembolso.json
}

# -- Ferramenta 3: atualizar-cadastro (reversible write) --
resource "aws_iam_role" "agente_cadastro" {
  name               = "cadencia-agente-cadastro-role"
  assume_role_policy = data.aws_iam_policy_document.confianca_lambda.json
  tags               = { ferramenta = "atualizar-cadastro" }
}

data "aws_iam_policy_document" "agente_cadastro" {
  statement {
    sid       = "ConectarComoUsuarioProprio"
    effect    = "Allow"
    actions   = ["rds-db:connect"]
    resources = ["${local.dbuser_arn_prefix}/cadencia_agente_cadastro"]
  }

  statement {
    sid       = "LedgerTetoEIdempotencia"
    effect    = "Allow"
    actions   = ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"]
    resources = [local.ledger_arn]
  }

  statement {
    sid       = "LogsDaPropriaFuncao"
    effect    = "Allow"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.atualizar_cadastro.arn}:*"]
  }
}

resource "aws_iam_role_policy" "agente_cadastro" {
  name   = "cadencia-agente-cadastro"
  role   = aws_iam_role.agente_cadastro.id
  policy = data.aws_iam_policy_document.agente_cadastro.json
}
