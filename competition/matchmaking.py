"""Matchmaking for a rated pool: which of the waiting bots play each other now.

The rule, each time the pool pairs its waiting bots:

1. Every waiting bot draws a key from the seeded generator: its rating plus a normal jitter of
   standard deviation `hypot(spread, deviation / 2)`, so near ratings usually meet, and a bot
   whose rating is still uncertain (large Glicko deviation) meets a wider range.
2. Going up the keys from the lowest, each bot not yet paired plays the next bot up the list it
   may play: not the last opponent of either bot (never the same pair twice in a row, unless
   the pool holds those two bots alone: `pool_size` 2, else they would never play again), not a bot
   of the same owner (unless `same_owner`), within `max_gap` rating points if set, and with
   room under `owner_cap` for each owner: the games an owner's bots play at once, counting
   those already `playing` and each pairing made here once per owner.
3. The one with the fewer firsts (colour difference, firsts minus seconds) plays first; on equal
   differences the one that played second last time; else a seeded coin.

Whoever finds no one it may play stays waiting for the next call. Pure and deterministic: the
same bots, games in play, rules and seed give the same pairings.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from competition.swiss import FIRST, SECOND, Colour, Pairing


class MatchmakingError(ValueError):
    """Waiting bots that cannot be paired as given (a bot waiting twice, a bad rule)."""


@dataclass(frozen=True, slots=True)
class PoolBot:
    """A waiting bot: its owner, Glicko rating and deviation, its opponents and colours (oldest
    first, the last one the most recent)."""

    id: str
    owner: str
    rating: float
    deviation: float = 0.0
    recent_opponents: tuple[str, ...] = ()
    colours: tuple[Colour, ...] = ()

    @property
    def colour_difference(self) -> int:
        """Return firsts minus seconds over `colours`."""
        return sum(1 if colour == FIRST else -1 for colour in self.colours)


@dataclass(frozen=True, slots=True)
class PoolRules:
    """The pool's pairing rule's knobs (see the module docstring)."""

    owner_cap: int = 2
    spread: float = 50.0
    max_gap: float | None = None
    same_owner: bool = False

    def validate(self) -> None:
        """Raise MatchmakingError naming a knob out of range."""
        if self.owner_cap < 1:
            raise MatchmakingError(f"owner_cap must be at least 1, not {self.owner_cap}")
        if self.spread < 0 or not math.isfinite(self.spread):
            raise MatchmakingError(f"spread must be finite and not negative, not {self.spread}")
        if self.max_gap is not None and self.max_gap < 0:
            raise MatchmakingError(f"max_gap must not be negative, not {self.max_gap}")


def _last_opponent(bot: PoolBot) -> str | None:
    return bot.recent_opponents[-1] if bot.recent_opponents else None


def may_meet(one: PoolBot, other: PoolBot, rules: PoolRules, *, again: bool = False) -> bool:
    """Return whether the rule lets `one` and `other` play now (owner caps aside); `again`
    lets them meet though they met last."""
    if one.id == other.id:
        return False
    if not again and (_last_opponent(one) == other.id or _last_opponent(other) == one.id):
        return False
    if one.owner == other.owner and not rules.same_owner:
        return False
    return rules.max_gap is None or abs(one.rating - other.rating) <= rules.max_gap


def pool_pairings(
    waiting: Sequence[PoolBot],
    *,
    playing: Mapping[str, int] | None = None,
    rules: PoolRules | None = None,
    seed: int = 0,
    pool_size: int | None = None,
) -> tuple[Pairing, ...]:
    """Pair the `waiting` bots by the rule of this module's docstring.

    `playing` maps an owner to the games its bots play now; `pool_size` is how many bots the
    pool holds that may play, waiting or playing (None: more than two). Returns the pairings,
    `first` playing first; bots in none of them stay waiting.
    """
    rules = rules or PoolRules()
    rules.validate()
    games = dict(playing or {})
    names = [bot.id for bot in waiting]
    if len(set(names)) != len(names):
        twice = next(name for index, name in enumerate(names) if name in names[:index])
        raise MatchmakingError(f"{twice!r} is waiting twice")
    generator = random.Random(seed)
    keys = [
        bot.rating + generator.gauss(0.0, math.hypot(rules.spread, bot.deviation / 2))
        for bot in waiting
    ]
    order = sorted(range(len(waiting)), key=lambda index: (keys[index], index))
    paired = [False] * len(waiting)

    def room(*owners: str) -> bool:
        return all(games.get(owner, 0) < rules.owner_cap for owner in set(owners))

    pairings: list[Pairing] = []
    for position, index in enumerate(order):
        one = waiting[index]
        if paired[index] or not room(one.owner):
            continue
        partner = next(
            (
                other
                for other in order[position + 1 :]
                if not paired[other]
                and may_meet(one, waiting[other], rules, again=pool_size == 2)
                and room(one.owner, waiting[other].owner)
            ),
            None,
        )
        if partner is None:
            continue
        other_bot = waiting[partner]
        paired[index] = paired[partner] = True
        for owner in {one.owner, other_bot.owner}:
            games[owner] = games.get(owner, 0) + 1
        pairings.append(_coloured(one, other_bot, generator))
    return tuple(pairings)


def _coloured(one: PoolBot, other: PoolBot, generator: random.Random) -> Pairing:
    if one.colour_difference != other.colour_difference:
        first_is_one = one.colour_difference < other.colour_difference
    elif one.colours and other.colours and one.colours[-1] != other.colours[-1]:
        first_is_one = one.colours[-1] == SECOND
    else:
        first_is_one = generator.random() < 0.5
    return Pairing(one.id, other.id) if first_is_one else Pairing(other.id, one.id)
