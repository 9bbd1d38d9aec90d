"""Response and request models of the usage and budget routes (``routes_usage.py``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from backend.api.models import OperatorBody


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Counts(_Out):
    input_tokens: int
    output_tokens: int
    turns: int
    cost_usd: float | None
    """Estimated from ``CADENCIA_MODEL_PRICES``; null when some model has no price."""


class AgentUsageOut(_Counts):
    """One agent on one model spec in one project (null: outside any project)."""

    agent: str
    project_id: str | None
    model: str


class ProjectUsageOut(_Counts):
    project_id: str | None


class UsageOut(_Out):
    """``GET /api/usage``: summed from the usage table over the day (null: every day)."""

    day: str | None
    agents: list[AgentUsageOut]
    projects: list[ProjectUsageOut]
    total: _Counts


class BudgetOut(_Out):
    """An agent's daily token budget (UTC days) and what it used today."""

    agent: str
    tokens_per_day: int | None
    used_today: int
    source: Literal["settings", "operator"] | None
    raised_by: str | None


class BudgetBody(OperatorBody):
    """An operator sets an agent's budget (tokens per UTC day, a positive integer)."""

    tokens_per_day: StrictInt = Field(gt=0, le=2**53)
