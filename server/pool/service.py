"""The rated pools' policies: who may enter a member, how waiting members are paired, and the
ladder a pool's page shows (docs/PROTOCOL.md, "Rated pools").

A member is a hosted bot (the server runs its active version) or a connected bot: a player
whose own client (`arena bot`) plays it. Each `pair_every_s` the loop pairs every pool: a member
waits when it is not booked into a pool game (server.pool.store's bookings), is not paused, and
can play: a hosted bot with a ready active version; a connected bot online and open to
challenges to the pool's game (server.presence) and in no unfinished match.
competition.matchmaking pairs the waiting (near ratings with a seeded jitter, never the same
pair twice in a row unless the pool holds only those two, colours balanced, at most `owner_cap`
games per owner at once), and each pairing is booked, then made an ordinary match on the pool's
clock, created by the server (a connected bot is seated at once: joining the pool is its
consent), rated as it ends (a hosted version under its spec, a connected bot as its player).

One process pairs: with PostgreSQL the one holding the pool leader's advisory lock
(server.db.leader); when it dies another takes the lead at its next round. The bookings make a
double booking impossible even so: a member's key is their primary key.

A connected bot that loses `hosted.failures_to_pause` pool games in a row on time or by forfeit
(its client stuck or gone) is paused; it joins again to resume.
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
    SeatRequest,
    TimeControl,
)
from server.db.leader import Leadership
from server.db.models import Player, epoch_ms
from server.errors import MatchError
from server.hosted import HostedBots
from server.matches.service import MatchService, new_match_id
from server.pool.store import RECENT_GAMES, Member, Played, PoolStore, player_key
from server.presence import Presence
from server.setting_groups import PoolDefinition
from server.settings import Settings

log = logging.getLogger(__name__)

LIVE_SHOWN = 50
RECENT_SHOWN = 50
LEADER_LOCK = (0x41524E03, 1)
"""The advisory lock (kind, key) of the process that pairs the pools."""
STUCK_CODES = frozenset({"timeout", "forfeit"})
"""How a connected bot's pool game is lost when its client is stuck or gone."""


class PoolService:
    """The server's rated pools of hosted and connected bots, and the loop that pairs them.

    `presence` says which connected bots are online; `leadership` which process pairs (None:
    this one always does).
    """

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        settings: Settings,
        matches: MatchService,
        hosted: HostedBots,
        presence: Presence,
        leadership: Leadership | None = None,
    ) -> None:
        self._store = PoolStore(sessions)
        self._settings = settings.pool
        self._pause_after = settings.hosted.failures_to_pause
        self._presence = presence
        self._leadership = leadership
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
        players = [m.player_id for m in members if m.player_id is not None]
        ratings = await self._store.ratings(pool.game, specs, players)
        playing = {key for game in live for key in (game.first_key, game.second_key)}
        entries = []
        for member in members:
            row = ratings.get(_rating_key(member))
            entries.append(
                PoolEntry(
                    bot=member.label,
                    spec=member.spec,
                    rating=round(row.rating if row else DEFAULT_RATING, 2),
                    deviation=round(row.deviation if row else DEFAULT_DEVIATION, 2),
                    games=row.games if row else 0,
                    paused=member.paused,
                    playing=member.key in playing,
                    joined_ms=epoch_ms(member.joined_at),
                    connected=member.connected,
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
        """Enter a member into a pool: a hosted bot of the caller's of the pool's game, or the
        caller itself as a connected bot (joining again resumes it when paused)."""
        pool = self._pool(name)
        if "/" not in body.bot:
            if body.bot.lower() != caller.name.lower():
                raise ProtocolError(
                    ErrorCode.FORBIDDEN,
                    f"a player enters only itself as a connected bot: you are {caller.name}, "
                    f"not {body.bot}",
                    {"bot": body.bot},
                )
            await self._store.join(name, player_id=caller.id)
            return await self.pool(name)
        owner, bot_name = body.bot.split("/", 1)
        found = await self._hosted.owned(owner, bot_name, caller)
        if found.row.game != pool.game:
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR,
                f"{found.spec} plays {found.row.game}; pool {name} plays {pool.game}",
                {"bot": body.bot},
            )
        await self._store.join(name, bot_id=found.row.id)
        return await self.pool(name)

    async def leave(self, name: str, owner: str, bot_name: str, caller: Player) -> None:
        """Take a hosted bot of the caller's out of a pool (its games being played end as
        usual)."""
        self._pool(name)
        found = await self._hosted.owned(owner, bot_name, caller)
        if not await self._store.leave(name, bot_id=found.row.id):
            raise ProtocolError(ErrorCode.NOT_FOUND, f"{found.spec} is not in pool {name}")

    async def leave_connected(self, name: str, player: str, caller: Player) -> None:
        """Take the caller, a connected bot, out of a pool (its game being played ends as
        usual)."""
        self._pool(name)
        if player.lower() != caller.name.lower():
            raise ProtocolError(
                ErrorCode.FORBIDDEN,
                f"only {player} takes itself out of a pool; you are {caller.name}",
            )
        if not await self._store.leave(name, player_id=caller.id):
            raise ProtocolError(ErrorCode.NOT_FOUND, f"{caller.name} is not in pool {name}")

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
        try:
            while True:
                if self._leadership is None or await self._leadership.held():
                    for name in self._pools:
                        try:
                            await self.pair(name)
                        except Exception:
                            log.exception("pairing pool %s", name)
                await asyncio.sleep(self._settings.pair_every_s)
        finally:
            if self._leadership is not None:
                await self._leadership.release()

    async def pair(self, name: str) -> int:
        """Pair a pool's waiting members once and start their matches; return how many
        started."""
        pool = self._pool(name)
        booked = await self._store.booked()
        members = await self._store.members(name)
        live = await self._store.games(name, unfinished=True, limit=10_000)
        owners = {m.key: str(m.owner_id) for m in members}
        busy: dict[str, int] = {}
        for game in live:
            for key in {game.first_key, game.second_key}:
                owner = owners.get(key)
                if owner is not None:
                    busy[owner] = busy.get(owner, 0) + 1
        able = [m for m in members if m.paused is None and (m.connected or m.spec is not None)]
        waiting = await self._ready([m for m in able if m.key not in booked], pool)
        if len(waiting) < 2:
            return 0
        bots, stuck = await self._pool_bots(pool, waiting)
        for member in stuck:
            await self._pause_stuck(pool, member)
        bots = [bot for bot in bots if bot.id not in {m.key for m in stuck}]
        pairings = pool_pairings(
            bots,
            playing=busy,
            rules=self._rules,
            seed=self._random.getrandbits(32),
            pool_size=len(able) - len(stuck),
        )
        by_key = {m.key: m for m in waiting}
        started = 0
        for pairing in pairings:
            first, second = by_key[pairing.first], by_key[pairing.second]
            if await self._start(pool, first, second):
                started += 1
        return started

    async def _ready(self, candidates: list[Member], pool: PoolDefinition) -> list[Member]:
        """Those of `candidates` that can play now: a connected bot must be online, open to
        challenges to the pool's game, and in no unfinished match (a hosted one is ready when
        it has a ready version, as read)."""
        connected = [m.player_id for m in candidates if m.player_id is not None]
        if not connected:
            return candidates
        online = await self._presence.online()
        in_play = await self._store.players_in_play(connected)
        return [
            m
            for m in candidates
            if m.player_id is None
            or (
                m.player_id in online
                and (online[m.player_id] is None or pool.game in (online[m.player_id] or ()))
                and m.player_id not in in_play
            )
        ]

    async def _pool_bots(
        self, pool: PoolDefinition, waiting: list[Member]
    ) -> tuple[list[PoolBot], list[Member]]:
        """The waiting members as pairing sees them, and the connected ones that lost their
        latest `failures_to_pause` games on time or by forfeit (to be paused)."""
        ratings = await self._store.ratings(
            pool.game,
            [m.spec for m in waiting if m.spec],
            [m.player_id for m in waiting if m.player_id is not None],
        )
        history = await self._store.games(
            pool.name,
            unfinished=False,
            limit=max(RECENT_GAMES, self._pause_after) * len(waiting),
            members=waiting,
        )
        bots, stuck = [], []
        for member in waiting:
            games = [g for g in history if member.key in (g.first_key, g.second_key)]
            if member.connected and _stuck(
                member.key, games[: self._pause_after], self._pause_after
            ):
                stuck.append(member)
            games = games[:RECENT_GAMES][::-1]  # oldest first
            opponents = tuple(
                g.second_key if g.first_key == member.key else g.first_key for g in games
            )
            colours: tuple[Colour, ...] = tuple(
                FIRST if g.first_key == member.key else SECOND for g in games
            )
            row = ratings.get(_rating_key(member))
            bots.append(
                PoolBot(
                    id=member.key,
                    owner=str(member.owner_id),
                    rating=row.rating if row else DEFAULT_RATING,
                    deviation=row.deviation if row else DEFAULT_DEVIATION,
                    recent_opponents=opponents,
                    colours=colours,
                )
            )
        return bots, stuck

    async def _pause_stuck(self, pool: PoolDefinition, member: Member) -> None:
        assert member.player_id is not None
        count = self._pause_after
        reason = (
            f"paused after losing {count} pool game{'' if count == 1 else 's'} in a row on time "
            "or by forfeit: is its client stuck or gone? Join the pool again to resume."
        )
        await self._store.pause(pool.name, member.player_id, reason)
        log.info("pool %s: %s %s", pool.name, member.label, reason)

    async def _start(self, pool: PoolDefinition, first: Member, second: Member) -> bool:
        """Book both members, then make their match; False when either was booked meanwhile
        (by another server) or the match could not be made."""
        match_id = new_match_id()
        if not await self._store.book(pool.name, match_id, (first.key, second.key)):
            log.info("pool %s: %s or %s is booked already", pool.name, first.label, second.label)
            return False
        body = MatchCreate(
            game=pool.game,
            time_control=TimeControl(base_ms=pool.base_ms, increment_ms=pool.increment_ms),
            seats=(_seat(first), _seat(second)),
        )
        try:
            await self._matches.create_match(body, match_id=match_id, owner=f"pool:{pool.name}")
        except MatchError as error:
            # A bot paused, or its seat taken elsewhere, since it was read: it waits.
            await self._store.release(match_id)
            log.info("pool %s: %s against %s not started: %s", pool.name, first, second, error)
            return False
        await self._store.add_game(pool.name, match_id, first, second)
        return True


def _seat(member: Member) -> SeatRequest:
    if member.connected:
        return member.label
    assert member.spec is not None
    return HouseBot(bot=member.spec)


def _rating_key(member: Member) -> str:
    return player_key(member.player_id) if member.player_id is not None else member.spec or ""


def _stuck(key: str, latest: list[Played], count: int) -> bool:
    """Whether the member `key` lost each of its `count` latest games on time or by forfeit."""
    if len(latest) < count:
        return False
    for game in latest:
        seat = 0 if game.first_key == key else 1
        if game.winner is None or game.winner == seat or game.code not in STUCK_CODES:
            return False
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
