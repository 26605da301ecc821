"""Render the web pages: the Jinja2 environment, built once per application, and the headers.

Autoescaping is on for every template, so a player named `<script>` is shown as text. Each page
is answered with a Content-Security-Policy that allows scripts, styles and connections only
from the server itself (no inline script or style anywhere in the templates).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup, escape

from server.web.results import RESULT_WORDS, outcome_text

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
"""The policy of every page: only the server's own scripts, styles and connections."""

PAGE_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
"""The headers every page is answered with."""


def wants_html(request: Request) -> bool:
    """True when the client asks for HTML before JSON (a browser), not a program."""
    accept = request.headers.get("accept", "")
    html = accept.find("text/html")
    json = accept.find("application/json")
    return html >= 0 and (json < 0 or html < json)


_BREAK_AFTER = re.compile(r"([:,])(?=.)")


def breakable(text: object) -> Markup:
    """Return `text` escaped, with a line-break opportunity (`<wbr>`) after each `:` and `,`.

    A bot's spec (`mcts:simulations=500,seed=3`) is one word to a browser, which would break it
    anywhere at a phone's width; static/names.js marks the same places in names it draws.
    """
    return Markup(_BREAK_AFTER.sub(r"\1<wbr>", str(escape(text))))


class Pages:
    """The templates of the web pages (server/web/templates), rendered with autoescaping."""

    def __init__(self) -> None:
        self._environment = Environment(
            loader=PackageLoader("server.web", "templates"),
            autoescape=True,
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self._environment.filters["breakable"] = breakable
        # The match page words a result as its script does, from the same table.
        self._environment.globals.update(outcome_text=outcome_text, result_words=dict(RESULT_WORDS))

    def render(self, name: str, context: Mapping[str, Any], status_code: int = 200) -> HTMLResponse:
        """Return the page `name` rendered with `context`, with the page headers."""
        html = self._environment.get_template(name).render(context)
        return HTMLResponse(html, status_code=status_code, headers=dict(PAGE_HEADERS))
