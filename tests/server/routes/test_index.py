"""The index at `/`: where a newcomer finds everything, and every place it names answers."""

from __future__ import annotations

import httpx

from protocol import PROTOCOL_VERSION, json_schema
from tests.server.conftest import RunningServer


def test_the_index_lists_places_that_all_answer(live_server: RunningServer) -> None:
    with httpx.Client(base_url=live_server.url, timeout=30) as client:
        response = client.get("/", headers={"Accept": "application/json"})
        assert response.status_code == 200
        index = response.json()
        assert index["name"] == "Arena" and index["protocol_version"] == PROTOCOL_VERSION
        assert {"/docs", "/health", "/protocol/schema", "/matches"} <= set(index["links"])
        assert "/ws" in index["websockets"]
        for path in index["links"]:
            assert client.get(path).status_code == 200, path
        # Every REST route the index names is a route of the app (no stale link).
        openapi = client.get("/openapi.json").json()["paths"]
        for path in index["links"]:
            assert path in openapi or path in ("/docs", "/openapi.json"), path


def test_a_browser_gets_a_page_with_links(live_server: RunningServer) -> None:
    browser_accept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    response = httpx.get(f"{live_server.url}/", headers={"Accept": browser_accept})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert '<a href="/docs">' in response.text and "<h1>Arena</h1>" in response.text
    plain = httpx.get(f"{live_server.url}/")  # httpx sends Accept: */*: data, not a page
    assert plain.headers["content-type"].startswith("application/json")


def test_the_protocol_schema_is_served(live_server: RunningServer) -> None:
    response = httpx.get(f"{live_server.url}/protocol/schema")
    assert response.status_code == 200
    assert response.json() == json_schema()
