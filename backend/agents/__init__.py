"""Agents: runtime, model providers, the team as data, decide(), roster and customer service."""
