"""Model providers behind one protocol: scripted replay, Bedrock Converse, OpenAI-compatible.

Use :func:`make_provider` with the spec from :func:`model_binding`; the runtime only ever
sees :class:`ModelProvider`, the message types and :class:`ModelTurn`.
"""

from __future__ import annotations

from backend.agents.providers.base import (
    AssistantMessage,
    Message,
    ModelProvider,
    ModelTurn,
    StopReason,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    UserMessage,
    parse_arguments,
)
from backend.agents.providers.exceptions import ProviderError, ProviderTimeoutError, ScriptError
from backend.agents.providers.factory import PLANNER, is_planner, make_provider, model_binding
from backend.agents.providers.scripted import Script, ScriptedProvider, load_script

__all__ = [
    "PLANNER",
    "AssistantMessage",
    "Message",
    "ModelProvider",
    "ModelTurn",
    "ProviderError",
    "ProviderTimeoutError",
    "Script",
    "ScriptError",
    "ScriptedProvider",
    "StopReason",
    "ToolCall",
    "ToolResultMessage",
    "ToolSpec",
    "UserMessage",
    "is_planner",
    "load_script",
    "make_provider",
    "model_binding",
    "parse_arguments",
]
