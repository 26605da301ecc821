"""Setting up a match from a request: what a new match may be, and who may sit where.

The policies of seats live here, as functions of a `LiveMatch` that refuse with a `MatchError`:
a new match's game, options, start position and seats (house bots within the server's maxima,
players found by name, any other player named only challenged); the seat a player may join,
answer a challenge for, or act from; the rematch a player of a finished match may ask for.
Nothing here locks, commits or publishes: the match service (server.matches.service) calls these
under the match's lock.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from bots.spec import BotSpecError
from games import game_names
from games.base import Game, GameError
from games.match import MatchConfig, Status
from games.referee import Referee
from games.registry import get_game
from protocol.errors import ErrorCode
from protocol.messages import HouseBot, MatchCreate, SeatRequest
from server.db.models import Player
from server.errors import MatchError
from server.limits.compute import oversize
from server.matches import translation
from server.matches.live import LiveMatch
from server.players import PlayerRegistry
from server.settings import Settings


def new_live_match(
    body: MatchCreate,
    settings: Settings,
    *,
    match_id: str,
    created_ms: int,
    creator: Player | None,
    owner: str | None,
) -> LiveMatch:
    """Return the match `body` asks for, no seat taken yet.

    Raises MatchError VALIDATION_ERROR naming the field for an unknown game, bad options, a
    bad start position or a game larger than the server's maxima.
    """
    try:
        game = get_game(body.game, body.options)
    except GameError as error:
        field_name = "options" if body.game in game_names() else "game"
        raise invalid(field_name, str(error)) from None
    tc = translation.referee_time_control(body.time_control)
    try:
        config = MatchConfig(
            game, body.start_position, tc, settings.max_illegal_moves, max_plies=body.max_plies
        )
        referee = Referee(config)
    except (GameError, ValueError) as error:
        raise invalid("start_position", str(error)) from None
    too_large = oversize(referee.state, settings)
    if too_large is not None:
        raise invalid("options" if body.start_position is None else "start_position", too_large)
    return LiveMatch(
        id=match_id,
        referee=referee,
        options=dict(game.option_texts),
        players=[None, None],
        names=[None, None],
        bot_specs=[None, None],
        created_ms=created_ms,
        created_by=None if creator is None else creator.id,
        creator_name=None if creator is None else creator.name,
        owner=owner,
    )


async def seat_requested(
    live: LiveMatch,
    body: MatchCreate,
    creator: Player | None,
    players: PlayerRegistry,
    session: AsyncSession,
    seat_bot: Callable[[str, Game], Awaitable[str]],
) -> None:
    """Seat the house bots and the creator `body` names; challenge the other players named.

    `creator` None (the server itself) seats every player named. `seat_bot` returns the spec a
    bot's seat stores, or raises BotSpecError for a bad bot spec. Raises MatchError
    VALIDATION_ERROR naming the seat for a bad bot spec, an unknown player, or one player in
    both seats.
    """
    game = live.referee.game
    for seat, request in enumerate(body.seats):
        if isinstance(request, HouseBot):
            try:
                live.bot_specs[seat] = await seat_bot(request.bot, game)
            except BotSpecError as error:
                raise invalid(f"seats.{seat}.bot", str(error)) from None
        elif request.lower() != "open":
            player = await players.named(request, session)
            if player is None:
                raise invalid(f"seats.{seat}", f"no player is named {request!r}")
            if creator is None or player.id == creator.id:
                live.players[seat], live.names[seat] = player.id, player.name
            else:
                live.challenged[seat] = player.id
                live.challenged_names[seat] = player.name
    named = [p for p in (*live.players, *live.challenged) if p is not None]
    if len(named) != len(set(named)):
        raise invalid("seats", "a player cannot hold both seats of a match")


def new_match_row(live: LiveMatch, body: MatchCreate) -> dict[str, Any]:
    """Return the values of the `Match` row of a new match."""
    tc = body.time_control
    return {
        "id": live.id,
        "game": live.referee.game.name,
        "options": live.options,
        "start_position": body.start_position,
        "base_ms": None if tc is None else tc.base_ms,
        "increment_ms": 0 if tc is None else tc.increment_ms,
        "move_cap_ms": None if tc is None else tc.move_cap_ms,
        "max_plies": live.referee.config.max_plies,
        "created_by": live.created_by,
    }


def seat_to_join(live: LiveMatch, player: Player, seat: int | None) -> int:
    """Return the open seat `player` may join (`seat` None: any); else refuse (SEAT_TAKEN)."""
    held = live.seat_of(player.id)
    if held is not None or live.challenged_seat(player.id) is not None:
        raise MatchError(
            ErrorCode.SEAT_TAKEN,
            f"{player.name} already holds seat {held} of this match"
            if held is not None
            else f"{player.name} is challenged to this match: accept the challenge",
            match_id=live.id,
        )
    open_seats = [s for s in (0, 1) if live.is_open(s)]
    if seat is None:
        seat = open_seats[0] if open_seats else None
    if seat is None or seat not in open_seats:
        raise MatchError(
            ErrorCode.SEAT_TAKEN,
            "this match has no open seat"
            if not open_seats
            else f"seat {seat} is not open (open: {open_seats})",
            match_id=live.id,
        )
    return seat


def challenged_seat(live: LiveMatch, player: Player) -> int:
    """Return the seat a pending challenge of `live` invites `player` to; else refuse
    (NOT_CHALLENGED)."""
    seat = live.challenged_seat(player.id)
    if seat is None or live.referee.status is not Status.WAITING:
        raise MatchError(
            ErrorCode.NOT_CHALLENGED,
            f"no pending challenge of this match invites {player.name}",
            match_id=live.id,
        )
    return seat


def seat_of(live: LiveMatch, player: Player) -> int:
    """Return the seat `player` holds in `live`, to move or act from; else refuse
    (NOT_A_PLAYER)."""
    seat = live.seat_of(player.id)
    if seat is None:
        raise MatchError(
            ErrorCode.NOT_A_PLAYER,
            f"{player.name} holds no seat in match {live.id}",
            match_id=live.id,
        )
    return seat


def rematch_request(live: LiveMatch, player: Player) -> MatchCreate:
    """Return the rematch of `live` that `player` asks for: the same game, options, start
    position, clocks and ply cap, the seats swapped. A house bot is seated again; the other
    player is named, so creating the match as `player` challenges them.

    Refuses NOT_A_PLAYER to anyone who held no seat, MATCH_NOT_OVER unless the match finished.
    """
    seat_of(live, player)
    referee = live.referee
    if referee.status is not Status.FINISHED:
        raise MatchError(
            ErrorCode.MATCH_NOT_OVER,
            f"match {live.id} is {referee.status.value}: a rematch follows a finished match",
            match_id=live.id,
        )
    config = referee.config
    start = config.start
    if start is not None and not isinstance(start, str):
        start = config.game.format_position(start)
    seats: list[SeatRequest] = []
    for old in (1, 0):
        bot, name = live.bot_specs[old], live.names[old]
        if bot is not None:
            seats.append(HouseBot(bot=bot))
        else:
            assert name is not None, "a finished match had both of its seats taken"
            seats.append(name)
    return MatchCreate(
        game=config.game.name,
        options=dict(live.options),
        start_position=start,
        time_control=translation.time_control(config.time_control),
        max_plies=config.max_plies,
        seats=(seats[0], seats[1]),
    )


def invalid(field_name: str, message: str) -> MatchError:
    """Return the VALIDATION_ERROR naming `field_name` of a request."""
    return MatchError(
        ErrorCode.VALIDATION_ERROR, f"{field_name}: {message}", details={field_name: message}
    )
