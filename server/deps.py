"""Every dependency of the routes, as `Annotated` types: settings, sessions, the services
(matches, tournaments, grading, courses, ratings), the players, the hub, the web pages, the player.

Everything comes from the application's state, filled by `create_app` and its lifespan;
nothing here is a module-level global. The getters take an `HTTPConnection`, so that REST and
WebSocket routes use the same ones. They are coroutines although they never wait: FastAPI runs a
plain function dependency in a worker thread, a thread hop per dependency and request that cost
more than the request's own work in bench/server.py.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from starlette.requests import HTTPConnection

from protocol.errors import ErrorCode
from server.auth import hash_token
from server.connections import address_key
from server.courses import CourseService
from server.db.models import Player
from server.errors import MatchError
from server.explore import Explorer
from server.grading import GradingService
from server.hub import Connection, Hub
from server.limits.rates import Action, RateLimiter
from server.matches.queries import MatchQueries
from server.matches.service import MatchService
from server.players import PlayerRegistry
from server.presence import Presence
from server.ratings import RatingService
from server.settings import Settings
from server.tournaments import TournamentService
from server.web.pages import Pages

_bearer = HTTPBearer(auto_error=False, description="The token `POST /players` returned.")


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
HubDep = Annotated[Hub, Depends(get_hub)]
PresenceDep = Annotated[Presence, Depends(get_presence)]
ExplorerDep = Annotated[Explorer, Depends(get_explorer)]
PagesDep = Annotated[Pages, Depends(get_pages)]
EngineDep = Annotated[AsyncEngine, Depends(get_engine)]
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


async def optional_player(players: PlayersDep, credentials: Credentials) -> Player | None:
    """Return the player of the bearer token, None without one; 401 for a wrong token."""
    if credentials is None:
        return None
    player = await players.by_token_hash(hash_token(credentials.credentials))
    if player is None:
        raise MatchError(ErrorCode.UNAUTHORIZED, "the bearer token is not a player's token")
    return player


async def current_player(player: Annotated[Player | None, Depends(optional_player)]) -> Player:
    """Return the player of the bearer token; 401 UNAUTHORIZED when it is missing or wrong."""
    if player is None:
        raise MatchError(
            ErrorCode.UNAUTHORIZED,
            "missing token: send the header `Authorization: Bearer TOKEN` (from POST /players)",
        )
    return player


PlayerDep = Annotated[Player, Depends(current_player)]
OptionalPlayerDep = Annotated[Player | None, Depends(optional_player)]

GUEST_COOKIE = "arena_guest"
"""The cookie holding a browser's guest token (HttpOnly, SameSite=Strict: see routes/web.py)."""


async def optional_guest(request: Request, players: PlayersDep) -> Player | None:
    """Return the player of the browser's guest cookie, None without one or with a stale one.

    Only the web form routes read the cookie; the REST routes take the bearer token alone, so
    a page's cookie never authenticates an API call.
    """
    token = request.cookies.get(GUEST_COOKIE)
    if not token:
        return None
    return await players.by_token_hash(hash_token(token))


async def current_guest(player: Annotated[Player | None, Depends(optional_guest)]) -> Player:
    """Return the player of the guest cookie; 401 UNAUTHORIZED without a valid one."""
    if player is None:
        raise MatchError(
            ErrorCode.UNAUTHORIZED,
            "no guest player in this browser: get one with POST /web/guest (the tournaments page)",
        )
    return player


GuestDep = Annotated[Player, Depends(current_guest)]
OptionalGuestDep = Annotated[Player | None, Depends(optional_guest)]


def rate_limiter(connection: HTTPConnection) -> RateLimiter:
    """Return the application's rate limiter (for code outside a dependency)."""
    limiter: RateLimiter = connection.app.state.rate_limiter
    return limiter


async def get_rate_limiter(connection: HTTPConnection) -> RateLimiter:
    """Return the application's rate limiter."""
    return rate_limiter(connection)


RateLimiterDep = Annotated[RateLimiter, Depends(get_rate_limiter)]


def _token_key(credentials: Credentials) -> str | None:
    return None if credentials is None else hash_token(credentials.credentials)


def _address(connection: HTTPConnection) -> str:
    return address_key(connection.client.host if connection.client else None)


async def client_address(connection: HTTPConnection) -> str:
    """Return the client's address as the per-address limits count it (IPv6 by its /64)."""
    return _address(connection)


ClientAddressDep = Annotated[str, Depends(client_address)]


async def limit_registration(request: Request, limiter: RateLimiterDep) -> None:
    """Count a registration against its address (`rate_registrations_per_address`)."""
    await limiter.check(Action.REGISTER, _address(request), None)


async def limit_match_creation(
    request: Request, limiter: RateLimiterDep, credentials: Credentials
) -> None:
    """Count a match creation against its token and its address."""
    await limiter.check(Action.CREATE_MATCH, _address(request), _token_key(credentials))


async def limit_tournament_creation(
    request: Request, limiter: RateLimiterDep, credentials: Credentials
) -> None:
    """Count a tournament creation against its token and its address."""
    await limiter.check(Action.CREATE_TOURNAMENT, _address(request), _token_key(credentials))


async def limit_web_tournament_creation(request: Request, limiter: RateLimiterDep) -> None:
    """Count a tournament created from the web form against its guest and its address, in the
    same counts as `POST /tournaments` (a guest's token is a token like any other)."""
    token = request.cookies.get(GUEST_COOKIE)
    key = hash_token(token) if token else None
    await limiter.check(Action.CREATE_TOURNAMENT, _address(request), key)


async def limit_web_match_creation(request: Request, limiter: RateLimiterDep) -> None:
    """Count a match created from the lobby's form against its guest (when the browser has
    one) and its address, in the same counts as `POST /matches`."""
    token = request.cookies.get(GUEST_COOKIE)
    key = hash_token(token) if token else None
    await limiter.check(Action.CREATE_MATCH, _address(request), key)


async def count_guest_registration(request: Request) -> None:
    """Count a guest made on the way by a browser route (a browser without a guest posting
    the play form, say) as a registration against its address, like `POST /web/guest`."""
    await rate_limiter(request).check(Action.REGISTER, _address(request), None)


async def limit_upload(request: Request, limiter: RateLimiterDep, credentials: Credentials) -> None:
    """Count a grader upload against its token (when one is sent) and its address."""
    await limiter.check(Action.UPLOAD, _address(request), _token_key(credentials))


async def limit_web_upload(request: Request, limiter: RateLimiterDep) -> None:
    """Count an upload from the grader page's form against its guest and its address, in the
    same counts as `POST /grader/jobs`."""
    token = request.cookies.get(GUEST_COOKIE)
    key = hash_token(token) if token else None
    await limiter.check(Action.UPLOAD, _address(request), key)


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
