"""Listings and exports of matches: a page of summaries, a match's record, its PDN, and what its
web page shows.

The page is one SQL query (with every seat's and challenged player's name) and one counting the
moves of the matches not in memory; a match in memory is summarised as it stands, without its
lock (a listing is a snapshot). A record, PDN or web page is read through the match service
(`MatchService.read`: under the match's lock, after letting a fallen flag end it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import Select, String, bindparam, func, or_, select
from sqlalchemy.orm import aliased

from games.match import EventKind
from protocol.messages import (
    MatchList,
    MatchRecord,
    MatchState,
    OnlineBot,
    OnlineBots,
    next_offset,
)
from server.db.models import Match, MatchEvent, Player
from server.matches import translation
from server.matches.live import LiveMatch
from server.matches.service import MatchService
from server.matches.store import UNFINISHED

Listing = Select[Match, str, str, str, str]
"""The listing query: each match and its seats' and challenged players' names (outer joins:
any name may be None)."""


@dataclass(frozen=True)
class MatchPage:
    """What a match's web page shows: its state as a spectator sees it, its record (each
    move's time), and the position before the first move and after each move."""

    state: MatchState
    record: MatchRecord
    positions: tuple[str, ...]


class MatchQueries:
    """Lists and exports the matches of `service`."""

    def __init__(self, service: MatchService) -> None:
        self._service = service
        self._store = service.store
        # Building a select of four aliased joins costs more than running it on a small table:
        # each shape of listing (which filters are given) is built once, its values bound.
        self._listings: dict[
            tuple[bool, bool, bool],
            Listing,
        ] = {}

    async def record(self, match_id: str) -> MatchRecord:
        """Return the record of a match: set-up, seats, every move with its time, result."""
        return await self._service.read(
            match_id, lambda live: translation.record(live, self._service.now_ms())
        )

    async def page(self, match_id: str) -> MatchPage:
        """Return what the match's web page shows, read at one moment under the match's lock."""
        service = self._service

        def read(live: LiveMatch) -> MatchPage:
            now_ms = service.now_ms()
            state = translation.match_state(live, None, now_ms, service.wall_ms())
            return MatchPage(
                state=state,
                record=translation.record(live, now_ms),
                positions=(state.start_position, *translation.positions(live)),
            )

        return await service.read(match_id, read)

    async def pdn(self, match_id: str) -> str:
        """Return a checkers match as PDN; MatchError BAD_MESSAGE for any other game."""
        return await self._service.read(match_id, translation.pdn)

    async def online_bots(
        self, online: Mapping[int, tuple[str, ...] | None], *, game: str | None, limit: int
    ) -> OnlineBots:
        """Return the bots of `online` (player id -> the games it accepts; None: any) that
        accept `game` (any game when None), by name, at most `limit`, each with the number of
        unfinished matches it sits in."""
        wanted = {
            player_id: games
            for player_id, games in online.items()
            if game is None or games is None or game in games
        }
        if not wanted:
            return OnlineBots(bots=())
        ids = list(wanted)
        async with self._store.sessions() as session:
            named = (
                await session.execute(
                    select(Player.id, Player.name).where(Player.id.in_(ids)).order_by(Player.name)
                )
            ).all()[:limit]
            shown = [player_id for player_id, _ in named]
            seated = (
                await session.execute(
                    select(Match.seat0_player_id, Match.seat1_player_id).where(
                        Match.status.in_(UNFINISHED),
                        or_(Match.seat0_player_id.in_(shown), Match.seat1_player_id.in_(shown)),
                    )
                )
            ).all()
        playing = Counter(seat for row in seated for seat in row if seat in wanted)
        return OnlineBots(
            bots=tuple(
                OnlineBot(name=name, games=wanted[player_id], playing=playing[player_id])
                for player_id, name in named
            )
        )

    async def list_matches(
        self,
        *,
        status: str | None = None,
        game: str | None = None,
        player: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> MatchList:
        """Return a page of matches, newest first; every filter given must hold."""
        filters = (status is not None, game is not None, player is not None)
        query = self._listings.get(filters)
        if query is None:
            query = self._listings[filters] = _listing(*filters)
        values = {"status": status, "game": game, "player": player}
        params: dict[str, str | int] = {k: v for k, v in values.items() if v is not None}
        params.update(limit=limit + 1, offset=offset)
        async with self._store.sessions() as session:
            rows = (await session.execute(query, params)).all()
            ids = [row[0].id for row in rows if self._store.in_memory(row[0].id) is None]
            plies: dict[str, int] = {}
            if ids:
                counted = await session.execute(
                    select(MatchEvent.match_id, func.count())
                    .where(MatchEvent.match_id.in_(ids), MatchEvent.kind == EventKind.MOVE.value)
                    .group_by(MatchEvent.match_id)
                )
                plies = {match_id: count for match_id, count in counted}
        summaries = []
        for row, name0, name1, challenged0, challenged1 in rows[:limit]:
            live = self._store.in_memory(row.id)
            if live is not None:
                summaries.append(translation.live_summary(live))
            else:
                summaries.append(
                    translation.stored_summary(
                        row, (name0, name1), (challenged0, challenged1), plies.get(row.id, 0)
                    )
                )
        return MatchList(
            matches=tuple(summaries), next_offset=next_offset(offset, limit, len(rows))
        )


def _listing(status: bool, game: bool, player: bool) -> Listing:
    """Return the listing query with the filters given, its values as bound parameters
    (`status`, `game`, `player`, `limit`, `offset`)."""
    seat0, seat1 = aliased(Player), aliased(Player)
    asked0, asked1 = aliased(Player), aliased(Player)
    query = (
        select(Match, seat0.name, seat1.name, asked0.name, asked1.name)
        .outerjoin(seat0, Match.seat0_player_id == seat0.id)
        .outerjoin(seat1, Match.seat1_player_id == seat1.id)
        .outerjoin(asked0, Match.seat0_challenged_id == asked0.id)
        .outerjoin(asked1, Match.seat1_challenged_id == asked1.id)
        .order_by(Match.created_at.desc(), Match.id)
        .limit(bindparam("limit"))
        .offset(bindparam("offset"))
    )
    if status:
        query = query.where(Match.status == bindparam("status"))
    if game:
        query = query.where(Match.game == bindparam("game"))
    if player:
        name = bindparam("player", type_=String)
        query = query.where(or_(seat0.name == name, seat1.name == name))
    return query
