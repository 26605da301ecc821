"""A tournament game played in one process, start to end, as the finished match to store.

A worker (server.jobs.tournament_games) plays a hosted tournament's game between two house bots
without a live match: `play_game` runs the same referee under the same set-up as the server's
match for that game (server.tournaments.runner: the opening's position as start position, the
ply cap less the opening's moves, the tournament's time control, the server's limit of refused
moves), and its house bots move as server.matches.housebots moves them (the clients' time budget,
the server's limit of seconds per search, a failure lost with the same words). What it returns is
what the match store would have written for that match, the finished `matches` row and its
`match_events` rows, and the game's result: the store records them in one transaction
(`TournamentStore.record_game`), so /matches/{id} shows the game like any other match.

Blocking and CPU-bound: call it in a thread. It reads no database and no clock but those given.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bots.result import SearchResult, SearchStopped
from bots.spec import Bot, check_limits, create_bot, parse_bot_spec
from bots.turns import (
    NO_MOVE,
    crashed,
    describe,
    house_bot_loses,
    played_illegal,
    seat_budget,
    stopped_at_limit,
)
from bots.wire import search_info
from competition.runner import GameTask, player_name
from games.match import Effect, Event, Rejected
from protocol.messages import HouseBot, MatchCreate, TournamentCreate, TournamentGame
from server.hosted.service import HostedPlayer
from server.hosted.specs import is_hosted
from server.limits.compute import search_limits
from server.matches import setup, store, translation
from server.matches.live import LiveMatch
from server.settings import Settings
from server.tournaments.wire import score_of_first


@dataclass(frozen=True)
class HostedSeat:
    """A hosted participant as a worker seats it: the version it plays (`hosted:OWNER/NAME@N`,
    what its match seat stores) and the bot running that version's program."""

    version: str
    bot: HostedPlayer


class GameStopped(Exception):  # noqa: N818 - a control-flow signal, not an error
    """The caller's `stop` ended the game before its end: nothing is to be stored."""


@dataclass(frozen=True)
class PlayedGame:
    """A tournament game played to its end: the rows of its finished match and its result.

    `match` maps every column of `matches` but the time stamps to its value; each of `events`
    maps the columns of a `match_events` row but its id and `created_at` (as the match store
    writes them); `game` is the tournament's game row with its result and reason.
    """

    tournament_id: str
    game: TournamentGame
    match: dict[str, Any]
    events: list[dict[str, Any]]


def match_body(body: TournamentCreate, task: GameTask) -> MatchCreate:
    """Return the match set-up of a tournament game, as the server's runner creates it.

    The seats are `task.first` and `task.second` (house bots, or players' names), the start
    position the opening's, and the match's ply cap the tournament's less the opening's moves
    (0: an opening as long as the cap, or longer, is drawn as its match starts, as the local
    runner draws it after the opening).
    """
    return MatchCreate(
        game=body.game,
        options=body.options,
        start_position=task.opening.position_text(),
        seats=(_seat(task.first), _seat(task.second)),
        time_control=body.time_control,
        max_plies=max(0, body.ply_cap - len(task.opening.moves)),
    )


def scheduled_game(task: GameTask, match_id: str) -> TournamentGame:
    """Return the game row of `task` played as the match `match_id`, without a result yet."""
    return TournamentGame(
        index=task.index,
        pair=task.pair,
        first=task.first,
        second=task.second,
        opening=task.opening.name,
        match_id=match_id,
        round=task.round,
    )


def match_owner(owner_id: int | None) -> str | None:
    """Return whose turn a tournament game's searches wait for: its owner's (see housebots)."""
    return None if owner_id is None else f"player:{owner_id}"


def play_game(
    tournament_id: str,
    body: TournamentCreate,
    task: GameTask,
    settings: Settings,
    *,
    match_id: str,
    owner_id: int | None = None,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
    wall: Callable[[], float] = time.time,
    hosted: Mapping[str, HostedSeat] | None = None,
) -> PlayedGame:
    """Play the tournament game `task` of `body` between its house bots; return what to store.

    `clock` (seconds, monotonic) times the referee and the searches, `wall` (seconds since the
    epoch) stamps the match and its events. Setting `stop` ends the game within milliseconds
    with GameStopped (nothing to store). A hosted participant is played by its `hosted` seat:
    the version it plays (the spec its match seat stores) and the bot that runs its program;
    the caller closes those bots. ValueError for a participant that is a registered player
    (such games are played as live matches, server.tournaments.runner), or a hosted one
    without its seat.
    """
    hosted = hosted or {}
    for participant in (task.first, task.second):
        if player_name(participant) is not None:
            raise ValueError(f"{participant!r} is a registered player, not a house bot")
        if is_hosted(participant) and participant not in hosted:
            raise ValueError(f"{participant!r} is a hosted bot, and its seat was not given")
    stop = stop or threading.Event()
    create = match_body(body, task)

    def now_ms() -> int:
        return int(clock() * 1000)

    def wall_ms() -> int:
        return int(wall() * 1000)

    live = setup.new_live_match(
        create,
        settings,
        match_id=match_id,
        created_ms=wall_ms(),
        creator=None,
        owner=match_owner(owner_id),
    )
    limits = search_limits(settings)
    game = live.referee.game
    bots: list[Bot] = []
    for seat, spec in enumerate((task.first, task.second)):
        if is_hosted(spec):
            bots.append(hosted[spec].bot)
            live.bot_specs[seat] = hosted[spec].version
            continue
        check_limits(parse_bot_spec(spec), limits)
        bots.append(create_bot(spec, game))
        live.bot_specs[seat] = spec
    stamps: dict[int, int] = {}

    def accept(effects: list[Effect]) -> list[Effect]:
        stamp = wall_ms()
        for effect in effects:
            if isinstance(effect, Event):
                stamps[effect.seq] = stamp
        return effects

    referee = live.referee
    accept(referee.start(now_ms()))
    while referee.result is None:
        seat = referee.state.to_move
        position, seq = referee.state, referee.seq
        why: str | None = None
        try:
            found = _search(bots[seat], live, seat, now_ms(), settings, stop, clock)
        except GameStopped:
            raise
        except SearchStopped as stopped:
            why = str(stopped)
        except Exception as error:  # noqa: BLE001 - any failure of a house bot loses its game
            why = crashed(describe(error))
        else:
            if found.move is None:
                why = NO_MOVE
            else:
                effects = referee.move(seat, position.format_move(found.move), now_ms())
                live.note_search(effects, translation.search_record(search_info(found)))
                accept(effects)
                rejected = next((e for e in effects if isinstance(e, Rejected)), None)
                if rejected is None or referee.result is not None:
                    continue
                why = played_illegal(translation.refusal(live, rejected).message)
        if referee.result is None and referee.seq == seq:
            reason = house_bot_loses(game, seat, task.first if seat == 0 else task.second, why)
            accept(referee.fail(seat, reason, now_ms()))
    return _played(tournament_id, task, live, create, stamps)


def _search(
    bot: Bot,
    live: LiveMatch,
    seat: int,
    now_ms: int,
    settings: Settings,
    stop: threading.Event,
    clock: Callable[[], float],
) -> SearchResult:
    """Return `bot`'s search, within the server's seconds per search
    (server.matches.search_pool)."""
    referee = live.referee
    budget = seat_budget(referee, seat, now_ms)
    limit = clock() + settings.bot.max_seconds

    def should_stop() -> bool:
        return stop.is_set() or clock() >= limit

    try:
        found = bot.choose(referee.state, time_budget=budget, stop=should_stop)
    except SearchStopped:
        if stop.is_set():
            raise GameStopped("the game was stopped") from None
        raise SearchStopped(stopped_at_limit(settings.bot.max_seconds)) from None
    if stop.is_set():
        raise GameStopped("the game was stopped")
    return found


def _played(
    tournament_id: str,
    task: GameTask,
    live: LiveMatch,
    create: MatchCreate,
    stamps: dict[int, int],
) -> PlayedGame:
    """Return the rows of the finished match `live` (as server.matches.store writes them)."""
    referee = live.referee
    result = referee.result
    assert result is not None
    match = setup.new_match_row(live, create) | store.match_values(live)
    events = [store.event_row(live, event, stamps[event.seq]) for event in referee.events]
    wired = translation.result(result)
    game = scheduled_game(task, live.id).model_copy(
        update={"result": score_of_first(wired), "reason": wired.description}
    )
    return PlayedGame(tournament_id, game, match, events)


def _seat(participant: str) -> str | HouseBot:
    """Return a match seat for a participant: a player's name, or a house bot."""
    name = player_name(participant)
    return HouseBot(bot=participant) if name is None else name


def is_house_bot_only(body: TournamentCreate) -> bool:
    """Return True when every participant of `body` is a house bot (no registered player)."""
    return all(player_name(participant) is None for participant in body.bots)


def is_for_workers(body: TournamentCreate, *, hosted: bool = True) -> bool:
    """Return True when workers may play `body`'s games: house bots only, hosted bots among
    them when `hosted` (the setting `worker_hosted`), and no SPRT (its test decides which games
    are played at all: a server's runner plays those). A Swiss tournament's rounds are queued
    one after the other, each once the one before it is played (server.jobs.tournament_games).
    """
    return (
        body.sprt is None
        and is_house_bot_only(body)
        and (hosted or not any(is_hosted(participant) for participant in body.bots))
    )
