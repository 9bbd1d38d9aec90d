"""The three customer-service tools and their registry."""
