"""The routes' dependencies, as `Annotated` types: settings, sessions, the service, the player.

Everything comes from `request.app.state`, filled by `create_app` and its lifespan; nothing
here is a module-level global.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from protocol.errors import ErrorCode
from server.auth import hash_token
from server.db.models import Player
from server.matches import MatchError, MatchService
from server.settings import Settings

_bearer = HTTPBearer(auto_error=False, description="The token `POST /players` returned.")


def get_app_settings(request: Request) -> Settings:
    """Return the settings the application was built with."""
    settings: Settings = request.app.state.settings
    return settings


def get_sessions(request: Request) -> async_sessionmaker[AsyncSession]:
    """Return the application's database session maker."""
    sessions: async_sessionmaker[AsyncSession] = request.app.state.sessions
    return sessions


def get_service(request: Request) -> MatchService:
    """Return the application's match service."""
    service: MatchService = request.app.state.service
    return service


SettingsDep = Annotated[Settings, Depends(get_app_settings)]
SessionsDep = Annotated[async_sessionmaker[AsyncSession], Depends(get_sessions)]
ServiceDep = Annotated[MatchService, Depends(get_service)]
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


async def optional_player(service: ServiceDep, credentials: Credentials) -> Player | None:
    """Return the player of the bearer token, None without one; 401 for a wrong token."""
    if credentials is None:
        return None
    player = await service.player_by_token_hash(hash_token(credentials.credentials))
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
