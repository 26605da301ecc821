"""Players and their tokens: registration, and the lookups every request makes.

`PlayerRegistry` is built in the lifespan (kept on `app.state.players`) and shared with the match
service, which finds the players a new match names. Players never change once registered, so
they are cached by token hash and by name; the cache starts over when full.

A course member's invite token (server.courses) signs its player in like the player's own
token. Invites are rotated and revoked, so they are looked up in the database every time,
never cached: a reissued or dropped member's old link fails at once, in every server process.
"""

from __future__ import annotations

import secrets

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from protocol.errors import ErrorCode, ProtocolError
from server.db.models import CourseMember, Player

PLAYER_CACHE = 10_000
"""Players kept in memory by token and by name (the cache starts over when full)."""


GUEST_PREFIX = "guest-"
"""A guest player's name is this and ten random hex digits (a player made for a browser)."""


class PlayerRegistry:
    """Registers players and finds them by token hash or by name."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = sessions
        self._by_token: dict[str, Player] = {}
        self._by_name: dict[str, Player] = {}

    async def register(self, name: str, token_hash: str) -> Player:
        """Store a new player; raise ProtocolError NAME_TAKEN when the name is registered (in
        any case: `Alice` is taken once `alice` is)."""
        taken = ProtocolError(
            ErrorCode.NAME_TAKEN,
            f"the player name {name!r} is already taken (names are compared without regard to "
            "case); choose another",
            {"name": name},
        )
        async with self._sessions() as session:
            existing = await session.scalar(
                select(Player.id).where(func.lower(Player.name) == name.lower())
            )
            if existing is not None:
                raise taken
            player = Player(name=name, token_hash=token_hash)
            session.add(player)
            try:
                await session.commit()
            except IntegrityError:
                raise taken from None
            return player

    async def register_guest(self, token_hash: str) -> Player:
        """Store a new guest player, named `guest-` and ten random hex digits.

        A guest is an ordinary player (it may create tournaments and play), made for a person in
        a browser who has no token of their own; its token is kept in the browser's cookie.
        """
        return await self.register(GUEST_PREFIX + secrets.token_hex(5), token_hash)

    async def by_token_hash(self, token_hash: str) -> Player | None:
        """Return the player whose token hashes to `token_hash`, or None.

        A player's own token first, then a course invite (of a member not dropped): the
        invite's member's player.
        """
        player = self._by_token.get(token_hash)
        if player is not None:
            return player
        async with self._sessions() as session:
            player = await session.scalar(select(Player).where(Player.token_hash == token_hash))
            if player is not None:
                self._remember(player)
                return player
            return await session.scalar(
                select(Player)
                .join(CourseMember, CourseMember.player_id == Player.id)
                .where(CourseMember.invite_hash == token_hash, CourseMember.dropped_at.is_(None))
            )

    async def named(self, name: str, session: AsyncSession | None = None) -> Player | None:
        """Return the registered player called `name`, or None (read in `session`, if given)."""
        player = self._by_name.get(name)
        if player is None:
            if session is None:
                async with self._sessions() as own:
                    player = await own.scalar(select(Player).where(Player.name == name))
            else:
                player = await session.scalar(select(Player).where(Player.name == name))
            if player is not None:
                self._remember(player)
        return player

    def _remember(self, player: Player) -> None:
        """Cache a player (players never change): every request authenticates by token."""
        if len(self._by_token) >= PLAYER_CACHE:
            self._by_token.clear()
            self._by_name.clear()
        self._by_token[player.token_hash] = player
        self._by_name[player.name] = player
