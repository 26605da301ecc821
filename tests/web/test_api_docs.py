"""The API documentation page /docs in Chromium: Swagger UI served by the server itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, Request, expect

from tests.web.conftest import DESKTOP, PHONE, settle

pytestmark = pytest.mark.web


def test_the_api_docs_work_offline_under_the_pages_policy(
    page: Page, screenshots: Path, web_server: object
) -> None:
    asked: list[str] = []

    def record(request: Request) -> None:
        asked.append(request.url)

    page.on("request", record)
    response = page.goto("/docs")
    assert response is not None and response.ok
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    # Swagger UI drew the routes from /openapi.json (a CSP refusal would be a console error,
    # which fails the test through the page fixture).
    moves = page.locator(".opblock-summary-path").get_by_text(
        "/matches/{match_id}/moves", exact=True
    )
    expect(moves).to_have_count(1, timeout=15_000)
    expect(page.locator("#api-docs-loading")).to_have_count(0)
    settle(page)
    base = page.url.split("/docs")[0]
    assert asked and all(url.startswith(base) for url in asked), asked
    # A route opens on Enter, as a person with a keyboard would open it.
    summary = page.locator(".opblock-summary-control", has_text="/health").first
    summary.focus()
    page.keyboard.press("Enter")
    expect(page.locator(".opblock.is-open")).to_have_count(1)
    for label, size in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(size)
        page.screenshot(path=str(screenshots / f"api-docs-{label}.png"))
