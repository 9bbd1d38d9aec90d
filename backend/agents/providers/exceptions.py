"""Errors raised by model providers.

Tree::

    CadenciaError                     (backend/exceptions.py)
    ├── UnavailableError
    │   └── ProviderError             a model call failed or answered something unusable
    │       └── ProviderTimeoutError  the model did not answer in time
    └── ConfigError
        └── ScriptError               a scripted-provider script does not fit its schema

A provider failing is a dependency failing (HTTP 502); a broken script is our own
configuration (HTTP 503, no retry helps). Bad provider specs and missing credentials raise
:class:`backend.exceptions.ConfigError`. Errors from botocore and httpx are translated here
with ``raise ... from exc``.
"""

from __future__ import annotations

from backend.exceptions import ConfigError, ProviderError

__all__ = ["ProviderError", "ProviderTimeoutError", "ScriptError"]


class ProviderTimeoutError(ProviderError):
    """The model endpoint did not answer within the configured timeout."""

    code = "provider_timeout"
    retryable = True


class ScriptError(ConfigError):
    """A scripted-provider script is malformed (bad JSON or wrong shape)."""

    code = "invalid_script"
