"""Cadência Ops backend: the API, the agents, the guard, the ledger and the gates."""
