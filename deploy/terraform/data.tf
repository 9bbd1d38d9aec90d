data "aws_caller_identity" "current" {}

data "aws_region" "current" {}

data "aws_partition" "current" {}

data "aws_rds_cluster" "erp" {
  cluster_identifier = var.cluster_erp
}

# Trust policy shared by the three roles: only the Lambda service may assume them,
# and only from this account. (The seed referenced it but never defined it.)
data "aws_iam_policy_document" "confianca_lambda" {
  statement {
    sid     = "LambdaAssumeRole"
    effect  = "Allow"
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }

    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

locals {
  ledger_arn = aws_dynamodb_table.execucoes.arn

  # rds-db:connect needs the dbuser ARN built from the cluster RESOURCE id
  # (cluster-XXXX), not the cluster ARN: the seed's "${cluster.arn}/user" matches
  # no database user at all.
  dbuser_arn_prefix = "arn:${data.aws_partition.current.partition}:rds-db:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:dbuser:${data.aws_rds_cluster.erp.cluster_resource_id}"


  # Dimension values of InterrupcoesPorTeto, exactly as the orchestrator publishes them.
  ferramentas = toset(["consultar-status-pedido", "emitir-reembolso", "atualizar-cadastro"])
}
