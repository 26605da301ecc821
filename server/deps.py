"""Every dependency of the routes, as `Annotated` types: settings, sessions, the services
(matches, tournaments, grading, courses, ratings), the players, the hub, the web pages, the
caller and the rate limits.

Everything comes from the application's state, filled by `create_app` and its lifespan;
nothing here is a module-level global. A request is authenticated by a bearer token or by the
browser's cookie, through one function (`resolve_caller`, taken as `optional_caller` or
`current_caller`; docs/SECURITY.md, "Credentials"). The getters take an `HTTPConnection`, so
that REST and WebSocket routes use the same ones. They are coroutines although they never wait:
FastAPI runs a plain function dependency in a worker thread, a thread hop per dependency and
request that cost more than the request's own work in bench/server.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from starlette.requests import HTTPConnection

from protocol.errors import ErrorCode, ProtocolError
from server.auth import hash_token
from server.classes import ClassTournaments
from server.connections import address_key
from server.courses import CourseService
from server.db.models import Player
from server.errors import MatchError
from server.explore import Explorer
from server.grading import GradingService
from server.hosted import HostedBots
from server.hub import Connection, Hub
from server.limits.rates import Action, RateLimiter
from server.matches.queries import MatchQueries
from server.matches.service import MatchService
from server.openapi import OPTIONAL_BEARER
from server.players import PlayerRegistry
from server.pool import PoolService
from server.presence import Presence
from server.ratings import RatingService
from server.settings import Settings
from server.tournaments import TournamentService
from server.web.pages import Pages
from server.web.security import SAFE_METHODS, check_origin

BEARER_DESCRIPTION = "The token `POST /players` returned."
_bearer = HTTPBearer(auto_error=False, description=BEARER_DESCRIPTION)
_optional_bearer = HTTPBearer(
    auto_error=False, scheme_name=OPTIONAL_BEARER, description=BEARER_DESCRIPTION
)


def app_settings(connection: HTTPConnection) -> Settings:
    """Return the settings the application was built with (for code outside a dependency)."""
    settings: Settings = connection.app.state.settings
    return settings


async def get_app_settings(connection: HTTPConnection) -> Settings:
    """Return the settings the application was built with."""
    return app_settings(connection)


async def get_sessions(connection: HTTPConnection) -> async_sessionmaker[AsyncSession]:
    """Return the application's database session maker."""
    sessions: async_sessionmaker[AsyncSession] = connection.app.state.sessions
    return sessions


async def get_service(connection: HTTPConnection) -> MatchService:
    """Return the application's match service."""
    service: MatchService = connection.app.state.service
    return service


async def get_players(connection: HTTPConnection) -> PlayerRegistry:
    """Return the application's player registry."""
    players: PlayerRegistry = connection.app.state.players
    return players


async def get_queries(connection: HTTPConnection) -> MatchQueries:
    """Return the application's listing of matches."""
    queries: MatchQueries = connection.app.state.queries
    return queries


async def get_tournaments(connection: HTTPConnection) -> TournamentService:
    """Return the application's tournament service."""
    service: TournamentService = connection.app.state.tournaments
    return service


async def get_grading(connection: HTTPConnection) -> GradingService:
    """Return the application's grading service."""
    service: GradingService = connection.app.state.grading
    return service


async def get_courses(connection: HTTPConnection) -> CourseService:
    """Return the application's course service."""
    service: CourseService = connection.app.state.courses
    return service


async def get_classes(connection: HTTPConnection) -> ClassTournaments:
    """The class tournaments (server.classes)."""
    classes: ClassTournaments = connection.app.state.classes
    return classes


async def get_hosted(connection: HTTPConnection) -> HostedBots:
    """The hosted bots (server.hosted)."""
    hosted: HostedBots = connection.app.state.hosted
    return hosted


async def get_pools(connection: HTTPConnection) -> PoolService:
    """The rated pools (server.pool)."""
    pools: PoolService = connection.app.state.pools
    return pools


async def get_ratings(connection: HTTPConnection) -> RatingService:
    """Return the application's rating service."""
    service: RatingService = connection.app.state.ratings
    return service


async def get_engine(connection: HTTPConnection) -> AsyncEngine:
    """Return the application's database engine."""
    engine: AsyncEngine = connection.app.state.engine
    return engine


async def get_pages(connection: HTTPConnection) -> Pages:
    """Return the application's web page templates."""
    pages: Pages = connection.app.state.pages
    return pages


async def get_explorer(connection: HTTPConnection) -> Explorer:
    """Return the application's search-tree explorer (its traces and their limits)."""
    explorer: Explorer = connection.app.state.explorer
    return explorer


async def get_hub(connection: HTTPConnection) -> Hub:
    """Return the application's hub of WebSocket connections."""
    hub: Hub = connection.app.state.hub
    return hub


async def get_presence(connection: HTTPConnection) -> Presence:
    """Return the application's list of online bots (server.presence)."""
    presence: Presence = connection.app.state.presence
    return presence


SettingsDep = Annotated[Settings, Depends(get_app_settings)]
SessionsDep = Annotated[async_sessionmaker[AsyncSession], Depends(get_sessions)]
ServiceDep = Annotated[MatchService, Depends(get_service)]
PlayersDep = Annotated[PlayerRegistry, Depends(get_players)]
QueriesDep = Annotated[MatchQueries, Depends(get_queries)]
TournamentsDep = Annotated[TournamentService, Depends(get_tournaments)]
GradingDep = Annotated[GradingService, Depends(get_grading)]
CoursesDep = Annotated[CourseService, Depends(get_courses)]
RatingsDep = Annotated[RatingService, Depends(get_ratings)]
HostedDep = Annotated[HostedBots, Depends(get_hosted)]
ClassesDep = Annotated[ClassTournaments, Depends(get_classes)]
PoolsDep = Annotated[PoolService, Depends(get_pools)]
HubDep = Annotated[Hub, Depends(get_hub)]
PresenceDep = Annotated[Presence, Depends(get_presence)]
ExplorerDep = Annotated[Explorer, Depends(get_explorer)]
PagesDep = Annotated[Pages, Depends(get_pages)]
EngineDep = Annotated[AsyncEngine, Depends(get_engine)]
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]
OptionalCredentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_optional_bearer)]


GUEST_COOKIE = "arena_guest"
"""The cookie holding a browser's player token (a guest's or a course member's invite token):
HttpOnly, SameSite=Strict (see routes/web.py)."""


@dataclass(frozen=True)
class Caller:
    """Who sends a request, and by which credential: the bearer token or the browser's cookie."""

    player: Player
    by_cookie: bool


def credential_token(connection: HTTPConnection) -> tuple[str | None, bool]:
    """Return the token a request is authenticated by and whether it is the cookie's.

    The `Authorization: Bearer` header first: a request sending one is never read by its
    cookie. (None, False) for a request sending neither.
    """
    scheme, _, value = connection.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and value:
        return value, False
    cookie = connection.cookies.get(GUEST_COOKIE)
    return (cookie, True) if cookie else (None, False)


async def resolve_caller(
    connection: HTTPConnection,
    players: PlayerRegistry,
    credentials: HTTPAuthorizationCredentials | None,
) -> Caller | None:
    """Return who sends the request: the player of its bearer token, else of its cookie.

    A wrong bearer token is 401; a stale cookie is no credential (None). A request the cookie
    authenticates with a method that changes something must come from this server's pages:
    another site's `Origin` is refused (FORBIDDEN), as every form of the pages is. A bearer
    token needs no Origin: no other site's page can send one.
    """
    if credentials is not None:
        player = await players.by_token_hash(hash_token(credentials.credentials))
        if player is None:
            raise MatchError(ErrorCode.UNAUTHORIZED, "the bearer token is not a player's token")
        return Caller(player, by_cookie=False)
    token = connection.cookies.get(GUEST_COOKIE)
    if not token:
        return None
    if connection.scope.get("method", "GET") not in SAFE_METHODS:
        check_origin(connection)
    player = await players.by_token_hash(hash_token(token))
    return None if player is None else Caller(player, by_cookie=True)


async def optional_caller(
    connection: HTTPConnection, players: PlayersDep, credentials: OptionalCredentials
) -> Caller | None:
    """Return who sends the request, None when no credential is sent (`resolve_caller`)."""
    return await resolve_caller(connection, players, credentials)


async def current_caller(
    connection: HTTPConnection, players: PlayersDep, credentials: Credentials
) -> Caller:
    """Return who sends the request (`resolve_caller`); 401 UNAUTHORIZED without a token or a
    signed-in browser."""
    caller = await resolve_caller(connection, players, credentials)
    if caller is None:
        raise missing_credential()
    return caller


def missing_credential() -> MatchError:
    """Return the refusal of a request that needs a player and names none (401)."""
    return MatchError(
        ErrorCode.UNAUTHORIZED,
        "missing token: send the header `Authorization: Bearer TOKEN` (from POST /players)",
    )


async def optional_player(
    caller: Annotated[Caller | None, Depends(optional_caller)],
) -> Player | None:
    """Return the player of the bearer token or the cookie, None without one; 401 for a wrong
    token."""
    return None if caller is None else caller.player


async def current_player(caller: Annotated[Caller, Depends(current_caller)]) -> Player:
    """Return the player of the bearer token or the cookie; 401 UNAUTHORIZED without one."""
    return caller.player


async def page_viewer(
    connection: HTTPConnection, players: PlayersDep, credentials: OptionalCredentials
) -> Player | None:
    """Return who reads a public page or answer, None when no credential names a player.

    The same credentials as `optional_caller`; a wrong token makes a reader anonymous rather
    than refused, since what they read is public.
    """
    try:
        caller = await resolve_caller(connection, players, credentials)
    except ProtocolError:
        return None
    return None if caller is None else caller.player


async def request_viewer(request: Request) -> Player | None:
    """Return who reads a page, as `page_viewer` does, for code outside a dependency (a
    route class answering a refusal with a page)."""
    return await page_viewer(request, await get_players(request), await _bearer(request))


CallerDep = Annotated[Caller, Depends(current_caller)]
PlayerDep = Annotated[Player, Depends(current_player)]
OptionalPlayerDep = Annotated[Player | None, Depends(optional_player)]
ViewerDep = Annotated[Player | None, Depends(page_viewer)]


def rate_limiter(connection: HTTPConnection) -> RateLimiter:
    """Return the application's rate limiter (for code outside a dependency)."""
    limiter: RateLimiter = connection.app.state.rate_limiter
    return limiter


async def get_rate_limiter(connection: HTTPConnection) -> RateLimiter:
    """Return the application's rate limiter."""
    return rate_limiter(connection)


RateLimiterDep = Annotated[RateLimiter, Depends(get_rate_limiter)]


def _token_key(connection: HTTPConnection) -> str | None:
    """Return the key a request's credential is counted under: its token's hash (the bearer
    token's, else the cookie's), None without one.

    A cookie's request from another site's page is refused (FORBIDDEN) before it is counted.
    """
    token, by_cookie = credential_token(connection)
    if token is None:
        return None
    if by_cookie and connection.scope.get("method", "GET") not in SAFE_METHODS:
        check_origin(connection)
    return hash_token(token)


def _address(connection: HTTPConnection) -> str:
    return address_key(connection.client.host if connection.client else None)


async def client_address(connection: HTTPConnection) -> str:
    """Return the client's address as the per-address limits count it (IPv6 by its /64)."""
    return _address(connection)


ClientAddressDep = Annotated[str, Depends(client_address)]


async def limit_registration(request: Request, limiter: RateLimiterDep) -> None:
    """Count a registration against its address (`rate_registrations_per_address`)."""
    await limiter.check(Action.REGISTER, _address(request), None)


async def limit_match_creation(request: Request, limiter: RateLimiterDep) -> None:
    """Count a match creation against its credential's token and its address."""
    await limiter.check(Action.CREATE_MATCH, _address(request), _token_key(request))


async def limit_tournament_creation(request: Request, limiter: RateLimiterDep) -> None:
    """Count a tournament creation against its credential's token and its address."""
    await limiter.check(Action.CREATE_TOURNAMENT, _address(request), _token_key(request))


async def count_guest_registration(request: Request) -> None:
    """Count a guest made on the way by a browser route (a browser without a guest posting
    the play form, say) as a registration against its address, like `POST /web/guest`."""
    await rate_limiter(request).check(Action.REGISTER, _address(request), None)


async def limit_upload(request: Request, limiter: RateLimiterDep) -> None:
    """Count a grader upload against its credential's token (when one is sent) and its
    address."""
    await limiter.check(Action.UPLOAD, _address(request), _token_key(request))


async def limit_trace(request: Request, limiter: RateLimiterDep) -> None:
    """Count a search trace (`POST /explore/trace`) against its address."""
    await limiter.check(Action.TRACE, _address(request), None)


async def limit_position(request: Request, limiter: RateLimiterDep) -> None:
    """Count an explorer position (`POST /explore/position`) against its address."""
    await limiter.check(Action.POSITION, _address(request), None)


def admit_message(connection: Connection) -> bool:
    """Return True if the message just received on `connection` may be handled.

    False: it was dropped, and the client was told (`RATE_LIMITED`) or the connection closed.
    """
    return rate_limiter(connection.websocket).admit(connection)
