"""Signing a browser in with an invite link: the page saying who the link signs in as, and
its form (`POST /web/join`), which puts the invite token in the browser's cookie."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request, status
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from server.deps import GUEST_COOKIE, CoursesDep, PagesDep, ViewerDep
from server.routes.course_common import NO_STORE
from server.routes.web import set_guest_cookie
from server.routes.web_courses.common import InviteToken, context
from server.web.security import check_origin

router = APIRouter(tags=["web pages"], include_in_schema=False)


def check_join_origin(request: Request) -> None:
    """Refuse a sign-in form posted from another site's page (FORBIDDEN), as `check_origin`.

    The join page's `Referrer-Policy: no-referrer` makes the browser send its form with
    `Origin: null`, so a null origin is taken when the browser's own Fetch Metadata says the
    form came from this server's page (`Sec-Fetch-Site: same-origin`). Signing a browser in
    from another site would let that site choose whose account the person works in.
    """
    origin = request.headers.get("origin")
    if origin == "null" and request.headers.get("sec-fetch-site") == "same-origin":
        return
    check_origin(request)


@router.get("/join/{token}")
async def join_page(
    request: Request,
    token: InviteToken,
    courses: CoursesDep,
    pages: PagesDep,
    viewer: ViewerDep,
) -> HTMLResponse:
    """Show who an invite link signs in as, with the button that does it (`POST /web/join`)."""
    invitation = await courses.invitation(token)
    if invitation is None:
        response = pages.render("join_unknown.html", context(request, viewer), 404)
    else:
        signed_in_as = None
        if viewer is not None and request.cookies.get(GUEST_COOKIE) != token:
            signed_in_as = viewer.name
        response = pages.render(
            "join.html",
            context(request, viewer, invitation=invitation, token=token, signed_in_as=signed_in_as),
        )
    # The token is in this page's URL: no link or resource of it may send it on.
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers.update(NO_STORE)
    return response


@router.post(
    "/web/join",
    status_code=status.HTTP_303_SEE_OTHER,
    response_class=RedirectResponse,
    dependencies=[Depends(check_join_origin)],
)
async def join(request: Request, courses: CoursesDep, pages: PagesDep) -> Response:
    """Sign this browser in with an invite token (form field `token`): the cookie holds it;
    go to the course's page. An unknown or replaced token: the page saying so (404)."""
    received = await request.form()
    token = received.get("token")
    invitation = await courses.invitation(token) if isinstance(token, str) and token else None
    if invitation is None or not isinstance(token, str):
        response: Response = pages.render("join_unknown.html", context(request, None), 404)
        response.headers["Referrer-Policy"] = "no-referrer"
        return response
    response = RedirectResponse(
        f"/courses/{invitation.course_id}", status_code=status.HTTP_303_SEE_OTHER
    )
    set_guest_cookie(response, request, token)
    return response
