"""A tournament's planning: its request checked against the server's maxima, its spec and schedule.

The spec and schedule are those of competition.runner (the body's `openings`, by default the same
as `arena tournament`'s), so the server plays the same games as the local runner; an SPRT
tournament's are those of competition.sequential (`arena match --sprt`'s pairs, up to the cap).
Every refusal is a ProtocolError VALIDATION_ERROR naming the field of the `TournamentCreate` body.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from bots.spec import BotSpecError, check_limits, parse_bot_spec
from competition.openings import Opening, OpeningError, deck, default_openings, parse_opening
from competition.runner import GameTask, TournamentError, TournamentSpec, player_name, schedule
from competition.sequential import SPRT_OPENINGS, pair_tasks
from competition.swiss_schedule import swiss_round
from games import Game, GameError, game_names, get_game
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import TournamentCreate
from server.hosted.specs import HostedSpecError, is_hosted, parse_hosted
from server.limits.compute import oversize, search_limits
from server.settings import Settings


def check_maxima(body: TournamentCreate, settings: Settings) -> Game:
    """Return the game of `body` once its options and bots are within the server's maxima.

    Cheap (nothing is searched, no bot is built): it runs on the event loop, so a tournament
    beyond the maxima is refused at once. ProtocolError VALIDATION_ERROR naming the field.
    """
    try:
        game = get_game(body.game, dict(body.options))
    except GameError as error:
        raise validation_error(
            "options" if body.game in game_names() else "game", str(error)
        ) from None
    too_large = oversize(game.initial_state(), settings)
    if too_large is not None:
        raise validation_error("options", too_large)
    check_sprt(body)
    limits = search_limits(settings)
    for bot in body.bots:
        if is_hosted(bot):
            # Which hosted bots exist is the match service's to say, when a game seats one.
            try:
                parse_hosted(bot)
            except HostedSpecError as error:
                raise validation_error("bots", str(error)) from None
        elif player_name(bot) is None:
            try:
                check_limits(parse_bot_spec(bot), limits)
            except BotSpecError as error:
                raise validation_error("bots", f"bot {bot!r}: {error}") from None
    return game


def check_sprt(body: TournamentCreate) -> None:
    """Refuse (VALIDATION_ERROR naming `sprt`) an SPRT tournament that is not between 2 bots."""
    if body.sprt is not None and len(body.bots) != 2:
        raise validation_error(
            "sprt",
            f"an SPRT tournament is a match between exactly 2 bots, not {len(body.bots)}: "
            "the test is about the first bot against the second",
        )


def tournament_spec(body: TournamentCreate, settings: Settings | None = None) -> TournamentSpec:
    """Return the runner's spec for `body`; ProtocolError VALIDATION_ERROR naming the field.

    With `settings`, the game and the bots must be within the server's maxima too.
    """
    if settings is not None:
        game = check_maxima(body, settings)
    else:
        check_sprt(body)
        try:
            game = get_game(body.game, dict(body.options))
        except GameError as error:
            field_name = "options" if body.game in game_names() else "game"
            raise validation_error(field_name, str(error)) from None
    spec = TournamentSpec(
        game=game.name,
        bots=tuple(body.bots),
        options=tuple(sorted(game.option_texts.items())),
        format=body.format,
        games_per_pairing=body.games_per_pairing,
        seed=body.seed,
        ply_cap=body.ply_cap,
    )
    try:
        spec.validate(players=True)
    except TournamentError as error:
        # What pydantic has not checked already is about the bots (specs, duplicates).
        raise validation_error("bots", str(error)) from None
    return spec


def plan(
    body: TournamentCreate, settings: Settings | None = None
) -> tuple[TournamentSpec, list[GameTask]]:
    """Return the spec and schedule of `body` (plays every opening; run it in a thread).

    Raises ProtocolError VALIDATION_ERROR naming the field: `openings` for an unknown deck, a
    deck of another game, an opening that cannot be played (with its index in the list) or,
    with `settings`, one that starts a game larger than the server's maxima.
    """
    spec = tournament_spec(body, settings)
    game = spec.build_game()
    try:
        openings = _openings(body, game, spec)
        if settings is not None:
            for index, opening in enumerate(openings):
                too_large = oversize(opening.start_state(game), settings)
                if too_large is not None:
                    raise OpeningError(_which(index, len(openings), opening.name, too_large))
        if body.swiss is not None:
            tasks = swiss_round(spec.bots, openings, spec.seed, [], {})
        elif body.sprt is None:
            tasks = schedule(spec, openings)
        else:
            tasks = list(pair_tasks(spec, openings, body.sprt.max_pairs))
    except OpeningError as error:
        raise validation_error("openings", str(error)) from None
    except (TournamentError, ValueError) as error:
        raise validation_error("games_per_pairing", str(error)) from None
    return spec, tasks


def games_total(body: TournamentCreate, first: Sequence[GameTask]) -> int:
    """Return how many games the tournament plays, its schedule (a Swiss tournament's first
    round) `first`: every round of a Swiss tournament has as many games as its first."""
    if body.swiss is not None:
        return body.swiss.rounds * len(first)
    return len(first)


def next_swiss_round(
    body: TournamentCreate, earlier: Sequence[Sequence[GameTask]], results: Mapping[int, float]
) -> list[GameTask]:
    """Return the games of a Swiss tournament's round after `earlier` (every game of which
    has its first bot's score in `results`); run it in a thread (it pairs up to a thousand
    bots)."""
    assert body.swiss is not None
    spec = tournament_spec(body)
    game = spec.build_game()
    openings = _openings(body, game, spec)
    return swiss_round(spec.bots, openings, spec.seed, earlier, results)


def swiss_rounds_known(
    body: TournamentCreate,
    known: Sequence[Sequence[GameTask]],
    results: Mapping[int, float],
    upto: int,
) -> list[list[GameTask]]:
    """Return a Swiss tournament's rounds, `known` ones first, paired on from `results` until
    the round holding game `upto` (or the last round whose predecessors are all played); run
    it in a thread. Each round is paired only once every game of the rounds before it has its
    result, so the rounds returned are those any process would pair from the same results."""
    assert body.swiss is not None
    rounds = [list(games) for games in known]
    if not rounds:
        rounds.append(plan(body)[1])
    per_round = len(rounds[0])
    while len(rounds) * per_round <= upto and len(rounds) < body.swiss.rounds:
        if any(task.index not in results for task in rounds[-1]):
            break
        rounds.append(next_swiss_round(body, rounds, results))
    return rounds


def current_round(body: TournamentCreate, games_total: int, unplayed: Sequence[int]) -> list[int]:
    """Return those of the `unplayed` game indexes that may be played now: all of them, but of
    a Swiss tournament only the earliest round's (the next is paired from its results)."""
    if body.swiss is None or not unplayed:
        return list(unplayed)
    per_round = games_total // body.swiss.rounds
    round_now = min(unplayed) // per_round
    return [index for index in unplayed if index // per_round == round_now]


def _openings(body: TournamentCreate, game: Game, spec: TournamentSpec) -> list[Opening]:
    """Return the body's deck or list of openings, or the game's default ones."""
    if body.openings is None:
        # An SPRT tournament deals as many as `arena match --sprt` does, in turn.
        needed = SPRT_OPENINGS if body.sprt is not None else spec.games_per_pairing // 2
        if body.swiss is not None:
            needed = body.swiss.rounds  # one a round
        return default_openings(game, needed, spec.seed)
    if isinstance(body.openings, str):
        return deck(body.openings, game)
    openings = []
    for index, text in enumerate(body.openings):
        try:
            openings.append(parse_opening(text, game))
        except OpeningError as error:
            reason = _NAMED.sub("", str(error), count=1)
            raise OpeningError(_which(index, len(body.openings), text, reason)) from None
    return openings


_NAMED = re.compile(r"^opening (?:'[^']*'|\"[^\"]*\"):? ?")
"""The name an opening's own error starts with (`_which` names it already)."""

SHOWN_CHARACTERS = 60
"""How much of a refused opening a message repeats."""


def _which(index: int, count: int, text: str, reason: str) -> str:
    """Say which opening of a list is refused, by its place (from 1) and its text, and why."""
    shown = text if len(text) <= SHOWN_CHARACTERS else text[: SHOWN_CHARACTERS - 3] + "..."
    return f"opening {index + 1} of {count} ({shown!r}): {reason}"


def validation_error(field_name: str, message: str) -> ProtocolError:
    """Return the VALIDATION_ERROR refusing `field_name` of a `TournamentCreate` body."""
    return ProtocolError(
        ErrorCode.VALIDATION_ERROR, f"{field_name}: {message}", {field_name: message[:500]}
    )
