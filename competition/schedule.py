"""What a tournament plays: its spec, and the schedule of its games.

`schedule` turns a `TournamentSpec` and a list of openings into numbered `GameTask`s; every
pairing plays each of its openings twice, the bots swapping colours. A task's `first` plays
the game's player 0 (who moves first from the standard start: Black in checkers) and its
`second` player 1.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from bots.spec import BotSpecError, create_bot, parse_bot_spec
from competition.openings import Opening, select_openings
from games import Game, GameError, get_game

Format = Literal["round-robin", "gauntlet", "swiss"]
FORMATS: tuple[Format, ...] = ("round-robin", "gauntlet", "swiss")

PLAYER_PREFIX = "player:"
"""A participant written `player:NAME` is a registered player who plays over the network
(a bot connected to the server with `arena bot`, say): only tournaments on a server have them."""


HOSTED_PREFIX = "hosted:"
"""A participant written `hosted:OWNER/NAME[@N]` is a bot a player uploaded to a server, which
runs it in its sandbox: only tournaments on a server have them, and the server checks them."""


def most_swiss_rounds(bots: int) -> int:
    """Return the most rounds a Swiss tournament of `bots` may play: bots - 1, in which each
    could meet every other once (a server's Swiss tournament allows as many)."""
    return bots - 1


def player_name(participant: str) -> str | None:
    """Return NAME for a `player:NAME` participant, None for a bot spec."""
    if participant.startswith(PLAYER_PREFIX):
        return participant[len(PLAYER_PREFIX) :]
    return None


class TournamentError(ValueError):
    """A tournament that cannot be played as specified: bad bots, format or game count."""


@dataclass(frozen=True, slots=True)
class TournamentSpec:
    """What a tournament plays.

    `options` are the game's options as sorted (key, text) pairs. `format` is "round-robin"
    (every bot against every other), "gauntlet" (the first bot against each of the others) or
    "swiss" (`rounds` rounds, each paired from the results before it: competition.swiss_schedule;
    `schedule` has no games for it). `games_per_pairing` is even: each opening is played twice,
    colours swapped (a Swiss board is one such pair: 2). `ply_cap` counts
    every ply including the opening's; reaching it draws the game. `move_time` is seconds per
    move (passed to the bots as their time budget; exceeding it by MOVE_TIME_SLACK loses on
    time), or None: bots run with their spec's own limits, e.g. alphabeta:depth=3.
    """

    game: str
    bots: tuple[str, ...]
    options: tuple[tuple[str, str], ...] = ()
    format: Format = "round-robin"
    games_per_pairing: int = 2
    seed: int = 0
    ply_cap: int = 200
    move_time: float | None = None
    rounds: int | None = None
    """A Swiss tournament's rounds (1 to most_swiss_rounds); None in the other formats."""

    def validate(self, *, players: bool = False) -> None:
        """Raise TournamentError naming what is wrong (bots are parsed, the game is built).

        `players`: `player:NAME` participants and hosted bots are allowed (a tournament on a
        server, which checks them itself).
        """
        if self.format not in FORMATS:
            raise TournamentError(f"unknown format {self.format!r} (formats: {', '.join(FORMATS)})")
        if len(self.bots) < 2:
            raise TournamentError(f"a tournament needs at least 2 bots, got {len(self.bots)}")
        twice = next((bot for index, bot in enumerate(self.bots) if bot in self.bots[:index]), None)
        if twice is not None:
            raise TournamentError(
                f"{twice!r} is named twice: name each bot once (a bot is named by its spec)"
            )
        if self.games_per_pairing < 2 or self.games_per_pairing % 2:
            raise TournamentError(
                f"games per pairing must be even and at least 2 (colour-swapped pairs), "
                f"not {self.games_per_pairing}"
            )
        self._validate_rounds()
        if self.ply_cap < 1:
            raise TournamentError(f"the ply cap must be at least 1, not {self.ply_cap}")
        if self.move_time is not None and not (
            math.isfinite(self.move_time) and self.move_time > 0
        ):
            raise TournamentError(f"the move time must be positive, not {self.move_time}")
        try:
            game = get_game(self.game, dict(self.options))
        except GameError as exc:
            raise TournamentError(str(exc)) from None
        for spec in self.bots:
            name = player_name(spec)
            if name is not None:
                if not players:
                    raise TournamentError(
                        f"{spec!r} is a registered player: players take part only in "
                        "tournaments on a server (POST /tournaments); here give bot specs"
                    )
                if not name:
                    raise TournamentError(f"{spec!r}: the player's name is missing")
                continue
            if spec.startswith(HOSTED_PREFIX):
                if not players:
                    raise TournamentError(
                        f"{spec!r} is a bot hosted by a server: it plays only in tournaments "
                        "on that server (POST /tournaments)"
                    )
                continue
            try:
                create_bot(parse_bot_spec(spec), game)
            except BotSpecError as exc:
                raise TournamentError(f"bot {spec!r}: {exc}") from None

    def _validate_rounds(self) -> None:
        if self.format != "swiss":
            if self.rounds is not None:
                raise TournamentError(
                    f"rounds are for a Swiss tournament, not a {self.format} (which plays all "
                    "its pairings)"
                )
            return
        if self.games_per_pairing != 2:
            raise TournamentError(
                "a Swiss board is one colour-swapped pair of games: 2 games per pairing, "
                f"not {self.games_per_pairing} (play more rounds instead)"
            )
        if self.rounds is None or self.rounds < 1:
            raise TournamentError(f"a Swiss tournament plays at least 1 round, not {self.rounds}")
        most = most_swiss_rounds(len(self.bots))
        if self.rounds > most:
            raise TournamentError(
                f"a Swiss tournament of {len(self.bots)} bots plays at most {most} "
                f"round{'' if most == 1 else 's'}, not {self.rounds}: each bot has {most} "
                f"other{'' if most == 1 else 's'} to meet, and more rounds would pair some twice"
            )

    def build_game(self) -> Game:
        """Return the game with its options."""
        return get_game(self.game, dict(self.options))

    def to_dict(self) -> dict[str, Any]:
        """Return the spec as plain JSON values (`from_dict` reads it back)."""
        data = asdict(self)
        data["bots"] = list(self.bots)
        data["options"] = dict(self.options)
        if self.rounds is None:
            del data["rounds"]  # as other formats' specs were written before Swiss had rounds
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TournamentSpec:
        """Return the spec `to_dict` wrote."""
        return cls(
            game=data["game"],
            bots=tuple(data["bots"]),
            options=tuple(sorted(data.get("options", {}).items())),
            format=data["format"],
            games_per_pairing=data["games_per_pairing"],
            seed=data["seed"],
            ply_cap=data["ply_cap"],
            move_time=data.get("move_time"),
            rounds=data.get("rounds"),
        )


@dataclass(frozen=True, slots=True)
class GameTask:
    """One scheduled game: `index` is its stable id, `pairing` its pairing's number, `pair` the
    number of its colour-swapped pair (the two games of one opening, the independent unit of
    the rating errors).

    `first` plays player 0 and `second` player 1, from `opening`.
    """

    index: int
    pair: int
    first: str
    second: str
    opening: Opening
    pairing: int = 0
    round: int | None = None
    """A Swiss tournament's round (from 0; competition.swiss_schedule); None in other formats."""


def pairings(spec: TournamentSpec) -> list[tuple[str, str]]:
    """Return the pairings in order: all pairs for round-robin, (bots[0], other) for gauntlet."""
    if spec.format == "gauntlet":
        return [(spec.bots[0], other) for other in spec.bots[1:]]
    return list(itertools.combinations(spec.bots, 2))


def schedule(spec: TournamentSpec, openings: Sequence[Opening]) -> list[GameTask]:
    """Return every game of the tournament in a fixed order, numbered from 0.

    Each pairing plays the same games_per_pairing / 2 openings (select_openings with the spec's
    seed, so every pairing meets the same starts), each twice: first the pairing's first bot as
    player 0, then colours swapped. Deterministic for a given spec and openings list. A Swiss
    tournament raises TournamentError: its rounds are paired as it goes
    (competition.swiss_schedule.swiss_round).
    """
    spec.validate(players=True)
    if spec.format == "swiss":
        raise TournamentError(
            "a Swiss tournament has no schedule ahead: each round is paired from the results "
            "before it (competition.swiss_schedule)"
        )
    chosen = select_openings(openings, spec.games_per_pairing // 2, spec.seed)
    tasks: list[GameTask] = []
    for pairing, (a, b) in enumerate(pairings(spec)):
        for opening in chosen:
            pair = len(tasks) // 2
            for first, second in ((a, b), (b, a)):
                tasks.append(GameTask(len(tasks), pair, first, second, opening, pairing))
    return tasks


def tournament_identity(spec: TournamentSpec, tasks: Sequence[GameTask]) -> dict[str, Any]:
    """Return what a journal must match to be resumed: the spec and a digest of the schedule."""
    text = json.dumps(
        [[t.index, t.pair, t.first, t.second, t.opening.name, t.opening.position] for t in tasks]
    )
    return {
        "spec": spec.to_dict(),
        "schedule": hashlib.sha256(text.encode()).hexdigest(),
        "games": len(tasks),
    }
