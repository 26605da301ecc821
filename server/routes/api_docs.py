"""The API documentation page, `/docs`: Swagger UI served by the server itself.

FastAPI's own `/docs` and `/redoc` load their scripts and styles from a CDN and start Swagger UI
with an inline script, so they break without the internet and sit outside the pages'
Content-Security-Policy. Here the page is one of Arena's templates, under the same policy:
Swagger UI's files come from the `swagger-ui-py` package (mounted at `/docs/assets`), and a
module of ours (`static/api_docs.js`) starts it on `/openapi.json`.
"""

from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from protocol import PROTOCOL_VERSION
from server.deps import PagesDep

SWAGGER_UI = files("swagger_ui") / "static"
"""Swagger UI's distribution, as the `swagger-ui-py` package ships it."""
ASSETS = "/docs/assets"
"""Where Swagger UI's own files (its script bundle and style sheet) are served."""

router = APIRouter(tags=["server"], include_in_schema=False)


@router.get("/docs", response_class=HTMLResponse)
async def api_docs(request: Request, pages: PagesDep) -> HTMLResponse:
    """The REST API's documentation, every route tried from the browser (Swagger UI)."""
    return pages.render(
        "api_docs.html",
        {
            "section": "api",
            "version": request.app.version,
            "protocol_version": PROTOCOL_VERSION,
            "assets": ASSETS,
        },
    )


def install_api_docs(app: FastAPI) -> None:
    """Serve `/docs` and Swagger UI's files (the app is built with `docs_url=None`)."""
    app.include_router(router)
    app.mount(ASSETS, StaticFiles(directory=str(SWAGGER_UI)), name="docs-assets")
