"""One module per ``cadencia`` sub-command; each exposes ``register(subparsers)``.

Shared option helpers live in :mod:`backend.commands._common`.
"""
