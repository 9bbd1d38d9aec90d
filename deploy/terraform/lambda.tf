# One function per tool. Packages are built outside Terraform and passed in as
# variables; each function's log group exists before it so retention applies.

resource "aws_cloudwatch_log_group" "consultar_status" {
  name              = "/aws/lambda/cadencia-consultar-status-pedido"
  retention_in_days = var.retencao_logs_dias
}

resource "aws_lambda_function" "consultar_status" {
  function_name    = "cadencia-consultar-status-pedido"
  role             = aws_iam_role.agente_consulta.arn
  runtime          = "dotnet8"
  handler          = "ConsultarStatus::Handler::Executar"
  timeout          = 5
  filename         = var.pacote_consultar_status
  source_code_hash = filebase64sha256(var.pacote_consultar_status)

  environment {
    variables = {
      CADENCIA_LEDGER_TABLE = aws_dynamodb_table.execucoes.name
      CADENCIA_DB_USER      = "cadencia_agente_consulta"
    }
  }

  depends_on = [aws_cloudwatch_log_group.consultar_status]
}

resource "aws_cloudwatch_log_group" "emitir_reembolso" {
  name              = "/aws/lambda/cadencia-emitir-reembolso"
  retention_in_days = var.retencao_logs_dias
}

resource "aws_lambda_function" "emitir_reembolso" {
  function_name    = "cadencia-emitir-reembolso"
  role             = aws_iam_role.agente_reembolso.arn
  runtime          = "dotnet8"
  handler          = "EmitirReembolso::Handler::Executar"
  timeout          = 8
  filename         = var.pacote_emitir_reembolso
  source_code_hash = filebase64sha256(var.pacote_emitir_reembolso)

  environment {
    variables = {
      CADENCIA_LEDGER_TABLE = aws_dynamodb_table.execucoes.name
      CADENCIA_DB_USER      = "cadencia_agente_reembolso"
    }
  }

  depends_on = [aws_cloudwatch_log_group.emitir_reembolso]
}

resource "aws_cloudwatch_log_group" "atualizar_cadastro" {
  name              = "/aws/lambda/cadencia-atualizar-cadastro"
  retention_in_days = var.retencao_logs_dias
}

resource "aws_lambda_function" "atualizar_cadastro" {
  function_name    = "cadencia-atualizar-cadastro"
  role             = aws_iam_role.agente_cadastro.arn
  runtime          = "dotnet8"
  handler          = "AtualizarCadastro::Handler::Executar"
  timeout          = 5
  filename         = var.pacote_atualizar_cadastro
  source_code_hash = filebase64sha256(var.pacote_atualizar_cadastro)

  environment {
    variables = {
      CADENCIA_LEDGER_TABLE = aws_dynamodb_table.execucoes.name
      CADENCIA_DB_USER      = "cadencia_agente_cadastro"
    }
  }

  depends_on = [aws_cloudwatch_log_group.atualizar_cadastro]
}
