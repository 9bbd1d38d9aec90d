"""Errors raised by model providers, in the tree of :mod:`backend.exceptions`.

:class:`ProviderTimeoutError` is a :class:`~backend.exceptions.ProviderError`, so an
:class:`~backend.exceptions.UnavailableError`: a provider failing is a dependency failing
(HTTP 502). :class:`ScriptError` is a :class:`~backend.exceptions.ConfigError`: a broken
script is our own configuration (HTTP 503, no retry helps); so are bad provider specs and
missing credentials. Errors from botocore and httpx are translated with
``raise ... from exc``.
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
