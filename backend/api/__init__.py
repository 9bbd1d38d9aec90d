"""The HTTP API (FastAPI). Build it with :func:`backend.api.app.create_app`."""
