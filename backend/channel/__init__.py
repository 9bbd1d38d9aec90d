"""The customer's outbound channel: every agent and operator message is delivered here."""
