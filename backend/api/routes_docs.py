"""``/openapi.json`` and ``/docs`` behind the token (``CADENCIA_PUBLIC_DOCS=true`` opens them),
and who may read ``/metrics`` (``CADENCIA_METRICS_ACCESS``: open, loopback (default), token).

The API's description tells an attacker every route and field; it is served like the rest of
the API unless the deployment chooses to publish it.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse

from backend.api.auth import authenticate
from backend.settings import Settings


def install_docs(app: FastAPI, settings: Settings) -> None:
    """Serve the OpenAPI document and Swagger UI, behind the token unless published."""
    guard = [] if settings.public_docs else [Depends(authenticate)]

    @app.get("/openapi.json", include_in_schema=False, dependencies=guard)
    async def openapi() -> JSONResponse:
        return JSONResponse(app.openapi())

    @app.get("/docs", include_in_schema=False, dependencies=guard)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url="/openapi.json", title=f"{app.title} - docs")


def _loopback(request: Request) -> bool:
    host = request.client.host if request.client else ""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def metrics_access(request: Request) -> Any:
    """Dependency of ``/metrics``: per ``CADENCIA_METRICS_ACCESS``, open, open to loopback
    clients (others need the token), or behind the token (401 without one)."""
    access = request.app.state.backend.settings.metrics_access
    if access == "open" or (access == "loopback" and _loopback(request)):
        return None
    return await authenticate(request)
