"""Job routes: the jobs that ran out of attempts, and an operator's rerun or drop of one.

Each dead job is also a ``job_dead`` inbox item whose ``actions`` name the two routes
below; both are recorded in the event log with the operator and the reason.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request
from pydantic import BaseModel

from backend.api.auth import acting, require_token
from backend.api.models import OperatorBody
from backend.api.schemas import ERRORS
from backend.jobs import Job, JobState

router = APIRouter(prefix="/api", dependencies=[Depends(require_token)], responses=ERRORS)
JobId = Annotated[int, Path(ge=1, le=2**62)]


class JobOut(BaseModel):
    """One durable job as stored."""

    id: int
    kind: str
    state: JobState
    unique_key: str | None
    payload: dict[str, Any]
    attempts: int
    max_attempts: int
    last_error: str | None
    run_at: float
    """When it is (or was) due, epoch seconds."""
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, job: Job) -> JobOut:
        """From the engine's record."""
        return cls(
            id=job.id,
            kind=job.kind,
            state=job.state,
            unique_key=job.unique_key,
            payload=job.payload,
            attempts=job.attempts,
            max_attempts=job.max_attempts,
            last_error=job.last_error,
            run_at=job.run_at,
            created_at=job.created_at,
            updated_at=job.updated_at,
        )


def _dead(request: Request) -> Any:
    return request.app.state.backend.dead_jobs


@router.get("/jobs/dead")
async def dead_jobs(
    request: Request, limit: Annotated[int, Query(ge=1, le=500)] = 100
) -> list[JobOut]:
    """Jobs that ran out of attempts, oldest death first."""
    return [JobOut.of(j) for j in await asyncio.to_thread(_dead(request).all, limit)]


@router.post("/jobs/{job_id}/rerun")
async def rerun_job(request: Request, job_id: JobId, body: OperatorBody) -> JobOut:
    """Queue a dead job again with fresh attempts. 404: no such job; 409: not dead."""
    job = await asyncio.to_thread(_dead(request).rerun, job_id, acting(request, body), body.reason)
    return JobOut.of(job)


@router.post("/jobs/{job_id}/drop")
async def drop_job(request: Request, job_id: JobId, body: OperatorBody) -> JobOut:
    """Give up on a dead job: it stays, ``cancelled``. 404: no such job; 409: not dead."""
    job = await asyncio.to_thread(_dead(request).drop, job_id, acting(request, body), body.reason)
    return JobOut.of(job)
