# The idempotency ledger. One item per key under the string hash key "pk":
#   teto#{conversa}#{entidade}#{ferramenta}   the teto de voltas counter, bumped by one
#                                             atomic conditional UpdateItem (no Query,
#                                             no begins_with on a partition key);
#   one item per claim key                    written by a conditional PutItem before
#                                             the tool acts, completed by UpdateItem.
# Expired items (expira_em, epoch seconds) are removed by DynamoDB's TTL.
resource "aws_dynamodb_table" "execucoes" {
  name         = "cadencia-agente-execucoes"
  billing_mode = "PAY_PER_REQUEST"
  hash_key     = "pk"

  attribute {
    name = "pk"
    type = "S"
  }

  ttl {
    attribute_name = "expira_em"
    enabled        = true
  }

  point_in_time_recovery {
    enabled = true
  }

  # AWS managed key (aws/dynamodb): a customer key here would also have to be
  # granted to every tool role for its item reads and writes.
  server_side_encryption {
    enabled = true
  }
}
