# The AWS deployment of Lab 87's three tools: one role, one function and one
# database user per tool, the idempotency ledger and the payment gateway secret.
# Checked in CI by `terraform fmt -check`, `terraform validate` and
# `cadencia audit iam deploy/terraform`.

terraform {
  required_version = ">= 1.5"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = "~> 5.100"
    }
  }
}

provider "aws" {
  region = var.regiao

  default_tags {
    tags = {
      squad = "atendimento"
      lab   = "L87"
    }
  }
}
