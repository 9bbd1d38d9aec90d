"""Errors of the customer-service tools.

Tree (under :class:`backend.exceptions.CadenciaError`)::

    CadenciaError
    ├── ToolRefusedError      the tool ran and certainly did nothing irreversible
    └── ValidationError
        └── UnknownToolError  a name that is none of the registered tools
"""

from __future__ import annotations

from backend.exceptions import CadenciaError, ValidationError


class ToolRefusedError(CadenciaError):
    """The tool ran and certainly did nothing irreversible (bad order, amount too high...)."""

    code = "tool_refused"


class UnknownToolError(ValidationError):
    """A name that is none of the registered tools (``tool`` in its context)."""

    code = "unknown_tool"
