"""The idempotency ledger: policy in ``base.py``, storage on SQL or DynamoDB."""
