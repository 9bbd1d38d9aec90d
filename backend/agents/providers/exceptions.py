"""Errors raised by model providers.

Tree::

    CadenciaError                     (backend/exceptions.py)
    └── ProviderError                 a model call failed or answered something unusable
        ├── ProviderTimeoutError      the model did not answer in time
        └── ScriptError               a scripted-provider script does not fit its schema

Bad provider specs and missing credentials raise :class:`backend.exceptions.ConfigError`.
Errors from botocore and httpx are translated here with ``raise ... from exc``.
"""

from __future__ import annotations

from backend.exceptions import CadenciaError


class ProviderError(CadenciaError):
    """A model provider could not produce a usable turn."""

    code = "provider_error"


class ProviderTimeoutError(ProviderError):
    """The model endpoint did not answer within the configured timeout."""

    code = "provider_timeout"


class ScriptError(ProviderError):
    """A scripted-provider script is malformed (bad JSON or wrong shape)."""

    code = "invalid_script"
