"""The guard: the orchestrator of tool calls, human takeovers, conversations and ``prove``."""
