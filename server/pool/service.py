"""The rated pools' policies: who may enter a bot, how waiting bots are paired, and the
ladder a pool's page shows (docs/PROTOCOL.md, "Rated pools").

Each `pair_every_s` the loop pairs every pool: a member waits when it is not playing a pool
game, is not paused and has a ready active version; competition.matchmaking pairs the waiting
(near ratings with a seeded jitter, never the same pair twice in a row, colours balanced, at
most `owner_cap` games per owner at once), and each pairing becomes an ordinary match between
the two versions on the pool's clock, created by the server, rated as it ends
(server.ratings rates each version under its spec).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from competition.matchmaking import PoolBot, PoolRules, pool_pairings
from competition.ratings import DEFAULT_DEVIATION, DEFAULT_RATING
from competition.swiss import FIRST, SECOND, Colour
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import (
    HouseBot,
    MatchCreate,
    Pool,
    PoolEntry,
    PoolGameSummary,
    PoolJoin,
    PoolList,
    PoolSummary,
    TimeControl,
)
from server.db.models import Player, epoch_ms
from server.errors import MatchError
from server.hosted import HostedBots
from server.matches.service import MatchService
from server.pool.store import RECENT_GAMES, Member, Played, PoolStore
from server.setting_groups import PoolDefinition
from server.settings import Settings

log = logging.getLogger(__name__)

LIVE_SHOWN = 50
RECENT_SHOWN = 50


class PoolService:
    """The server's rated pools of hosted bots, and the loop that pairs them."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        settings: Settings,
        matches: MatchService,
        hosted: HostedBots,
    ) -> None:
        self._store = PoolStore(sessions)
        self._settings = settings.pool
        self._pools = {pool.name: pool for pool in settings.pool.pools}
        self._matches = matches
        self._hosted = hosted
        self._rules = PoolRules(owner_cap=settings.pool.owner_cap, spread=settings.pool.spread)
        self._random = random.Random()
        self._task: asyncio.Task[None] | None = None

    def _pool(self, name: str) -> PoolDefinition:
        pool = self._pools.get(name)
        if pool is None:
            raise ProtocolError(
                ErrorCode.NOT_FOUND,
                f"no pool is called {name!r}; the pools: {', '.join(self._pools) or 'none'}",
            )
        return pool

    async def pools(self) -> PoolList:
        counts = await self._store.counts()
        return PoolList(
            pools=tuple(
                PoolSummary(
                    name=pool.name,
                    game=pool.game,
                    base_ms=pool.base_ms,
                    increment_ms=pool.increment_ms,
                    members=counts.get(pool.name, 0),
                )
                for pool in self._pools.values()
            )
        )

    async def pool(self, name: str) -> Pool:
        """A pool's ladder (highest rating first), live games and latest finished games."""
        pool = self._pool(name)
        members = await self._store.members(name)
        live = await self._store.games(name, unfinished=True, limit=LIVE_SHOWN)
        recent = await self._store.games(name, unfinished=False, limit=RECENT_SHOWN)
        specs = [m.spec for m in members if m.spec is not None]
        ratings = await self._store.ratings(pool.game, specs)
        playing = {bot for game in live for bot in (game.first_bot_id, game.second_bot_id)}
        entries = []
        for member in members:
            row = ratings.get(member.spec or "")
            entries.append(
                PoolEntry(
                    bot=member.label,
                    spec=member.spec,
                    rating=round(row.rating if row else DEFAULT_RATING, 2),
                    deviation=round(row.deviation if row else DEFAULT_DEVIATION, 2),
                    games=row.games if row else 0,
                    paused=member.paused,
                    playing=member.bot_id in playing,
                    joined_ms=epoch_ms(member.joined_at),
                )
            )
        entries.sort(key=lambda entry: (-entry.rating, entry.bot))
        return Pool(
            name=pool.name,
            game=pool.game,
            base_ms=pool.base_ms,
            increment_ms=pool.increment_ms,
            ladder=tuple(entries),
            live=tuple(_summary(game) for game in live),
            recent=tuple(_summary(game) for game in recent),
        )

    async def join(self, name: str, caller: Player, body: PoolJoin) -> Pool:
        """Enter a bot of the caller's into a pool of its game."""
        pool = self._pool(name)
        owner, bot_name = body.bot.split("/", 1)
        found = await self._hosted.owned(owner, bot_name, caller)
        if found.row.game != pool.game:
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR,
                f"{found.spec} plays {found.row.game}; pool {name} plays {pool.game}",
                {"bot": body.bot},
            )
        await self._store.join(name, found.row.id)
        return await self.pool(name)

    async def leave(self, name: str, owner: str, bot_name: str, caller: Player) -> None:
        """Take a bot of the caller's out of a pool (its games being played end as usual)."""
        self._pool(name)
        found = await self._hosted.owned(owner, bot_name, caller)
        if not await self._store.leave(name, found.row.id):
            raise ProtocolError(ErrorCode.NOT_FOUND, f"{found.spec} is not in pool {name}")

    # Pairing.

    def start(self) -> None:
        """Start the loop that pairs every pool, every `pair_every_s`."""
        if self._task is None and self._pools:
            self._task = asyncio.create_task(self._loop(), name="arena-pools")

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _loop(self) -> None:
        while True:
            for name in self._pools:
                try:
                    await self.pair(name)
                except Exception:
                    log.exception("pairing pool %s", name)
            await asyncio.sleep(self._settings.pair_every_s)

    async def pair(self, name: str) -> int:
        """Pair a pool's waiting bots once and start their matches; return how many started."""
        pool = self._pool(name)
        members = await self._store.members(name)
        live = await self._store.games(name, unfinished=True, limit=10_000)
        playing_bots = {bot for game in live for bot in (game.first_bot_id, game.second_bot_id)}
        owners = {m.bot_id: str(m.owner_id) for m in members}
        busy: dict[str, int] = {}
        for game in live:
            for bot in {game.first_bot_id, game.second_bot_id}:
                owner = owners.get(bot)
                if owner is not None:
                    busy[owner] = busy.get(owner, 0) + 1
        waiting = [
            m
            for m in members
            if m.spec is not None and m.paused is None and m.bot_id not in playing_bots
        ]
        if len(waiting) < 2:
            return 0
        bots = await self._pool_bots(pool, waiting)
        pairings = pool_pairings(
            bots, playing=busy, rules=self._rules, seed=self._random.getrandbits(32)
        )
        by_id = {str(m.bot_id): m for m in waiting}
        started = 0
        for pairing in pairings:
            first, second = by_id[pairing.first], by_id[pairing.second]
            if await self._start(pool, first, second):
                started += 1
        return started

    async def _pool_bots(self, pool: PoolDefinition, waiting: list[Member]) -> list[PoolBot]:
        ratings = await self._store.ratings(pool.game, [m.spec for m in waiting if m.spec])
        history = await self._store.games(
            pool.name,
            unfinished=False,
            limit=RECENT_GAMES * len(waiting),
            bot_ids=[m.bot_id for m in waiting],
        )
        bots = []
        for member in waiting:
            games = [g for g in history if member.bot_id in (g.first_bot_id, g.second_bot_id)]
            games = games[:RECENT_GAMES][::-1]  # oldest first
            opponents = tuple(
                str(g.second_bot_id if g.first_bot_id == member.bot_id else g.first_bot_id)
                for g in games
            )
            colours: tuple[Colour, ...] = tuple(
                FIRST if g.first_bot_id == member.bot_id else SECOND for g in games
            )
            row = ratings.get(member.spec or "")
            bots.append(
                PoolBot(
                    id=str(member.bot_id),
                    owner=str(member.owner_id),
                    rating=row.rating if row else DEFAULT_RATING,
                    deviation=row.deviation if row else DEFAULT_DEVIATION,
                    recent_opponents=opponents,
                    colours=colours,
                )
            )
        return bots

    async def _start(self, pool: PoolDefinition, first: Member, second: Member) -> bool:
        assert first.spec is not None and second.spec is not None
        body = MatchCreate(
            game=pool.game,
            time_control=TimeControl(base_ms=pool.base_ms, increment_ms=pool.increment_ms),
            seats=(HouseBot(bot=first.spec), HouseBot(bot=second.spec)),
        )
        try:
            state = await self._matches.create_match(body, owner=f"pool:{pool.name}")
        except MatchError as error:
            # A bot paused, or its seat taken elsewhere, since it was read: it waits.
            log.info("pool %s: %s against %s not started: %s", pool.name, first, second, error)
            return False
        await self._store.add_game(pool.name, state.match_id, first.bot_id, second.bot_id)
        return True


def _summary(game: Played) -> PoolGameSummary:
    return PoolGameSummary(
        match_id=game.match_id,
        first=game.first,
        second=game.second,
        status=game.status,
        winner=game.winner,
        created_ms=epoch_ms(game.created_at),
    )
