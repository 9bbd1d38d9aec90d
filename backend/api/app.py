"""``create_app(settings)``: the FastAPI application around one :class:`Backend`."""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from backend.api.errors import BodySizeLimit, install_error_handlers
from backend.api.routes_actions import router as actions
from backend.api.routes_agents import router as agents
from backend.api.routes_audit import AuditTrail
from backend.api.routes_audit import router as audit
from backend.api.routes_conversations import router as conversations
from backend.api.routes_docs import install_docs
from backend.api.routes_events import router as log_pages
from backend.api.routes_inbox import router as inbox
from backend.api.routes_jobs import router as jobs
from backend.api.routes_prs import router as prs
from backend.api.routes_read import install_stream_cache, public
from backend.api.routes_read import router as reads
from backend.api.routes_usage import router as usage
from backend.api.schemas import stream_components
from backend.settings import Settings

log = logging.getLogger(__name__)


def create_app(settings: Settings, *, backend: Any = None, demo: bool = False) -> FastAPI:
    """Build the API. Nothing starts until the ASGI lifespan does (STYLE rule 2).

    Args:
        settings: where state lives and how to reach things.
        backend: an already-open :class:`backend.core.Backend` (``cadencia up`` shares one);
            by default one is opened from ``settings`` at startup and closed at shutdown.
        demo: run the demo pipeline in the background once started.
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        from backend.core import Backend

        owned = backend is None
        core = backend or Backend.open(settings)
        app.state.backend = core
        app.state.demo = demo  # the execution route seeds demo tasks only under --demo
        if owned:
            await core.start()
        if demo:
            from backend.demo.runner import run_demo

            core.spawn(run_demo(core), "demo")
        _freeze_startup_heap()
        try:
            yield
        finally:
            gc.unfreeze()  # collectable again (a test process starts many apps)
            if owned:
                await core.stop()

    app = FastAPI(
        title="Cadência Ops backend",
        version="0.1.0",
        lifespan=lifespan,
        description="Agents, execution ledger and gates. Bearer auth on every /api route.",
        # Served by install_docs: behind the token unless CADENCIA_PUBLIC_DOCS=true.
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    _document_stream(app)
    install_error_handlers(app)
    install_stream_cache(app)
    app.include_router(public)
    app.include_router(reads)
    app.include_router(log_pages)
    app.include_router(actions)
    app.include_router(conversations)
    app.include_router(prs)
    app.include_router(inbox)
    app.include_router(jobs)
    app.include_router(agents)
    app.include_router(usage)
    app.include_router(audit)
    install_docs(app, settings)
    app.add_middleware(AuditTrail)
    app.add_middleware(BodySizeLimit, limit=settings.max_body_bytes)
    return app


def _document_stream(app: FastAPI) -> None:
    """Add the SSE ``data`` models to the OpenAPI components (see ``STREAM_RESPONSE``)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            schema.setdefault("components", {}).setdefault("schemas", {}).update(
                stream_components()
            )
        return app.openapi_schema or build()

    app.openapi = openapi  # type: ignore[method-assign]


def _freeze_startup_heap() -> None:
    """Move everything alive after start-up (modules, parliament's action database, the
    scanners' rules, caches) out of the collector's sight, so a full collection walks only
    what was allocated since instead of pausing every request that allocates behind it
    (docs/decisions/0006-freeze-the-startup-heap.md). Nothing frozen is ever freed, which
    is right for objects that live as long as the process anyway."""
    gc.collect()
    gc.freeze()
