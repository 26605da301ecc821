"""Swiss-system pairing: the next round of a Swiss tournament from the rounds played so far.

A simplified Dutch system (after FIDE's, C.04.3), for class tournaments of a few hundred bots:

- **Ranking.** Players are ranked by score, then by pairing number: rating (highest first),
  equal ratings in an order drawn by lot from the seed.
- **The bye.** With an odd number of players, the bye goes to the lowest-ranked player among
  those with the fewest byes so far (so nobody has a second bye before everyone has had one)
  for whom the others can still be paired by the rules below. It scores `bye_points` per game
  of a board (default 1: a bye is worth a win) and gives no colour.
- **Absolute rules, in order of precedence.** Two players meet at most once while the others can
  still all be paired (checked exactly, by a maximum matching, competition.matching); no player's
  colour difference (firsts minus seconds) goes beyond +-2; no player has the same colour three
  times in a row. When no pairing keeps all three, the last ones are dropped first; when even
  rematches cannot be avoided, any pair may play, each player preferring one it has not met.
- **Score groups.** Groups are paired from the top. In a group of m players still unpaired, the
  top half S1 (m // 2 players) meets the bottom half S2: S1's i-th player takes S2's i-th, else
  the next in S2 (wrapping round to S2's top), an opponent whose colour preference complements
  its own before one who wants the same colour; if none
  fits, another S1 player below it, then the highest player of the lower groups (the player
  floats down). S2 players left over pair among themselves; one left alone floats down. A
  pairing is taken only if everyone still unpaired can then be paired (the matching again), so
  a group never strands a player the rules could have paired.
- **Colours.** Each player's preference is for the colour it had less (strongly at a difference
  of 1, absolutely at 2 or after two in a row), else the other colour than last time. Two players
  wanting the same colour: the stronger preference gets it, then the one who had the other
  colour the last time their colours differed, then the higher-ranked. Round one (no
  preferences) alternates down the boards, the top board's colour drawn from the seed.
- **Game pairs.** With `game_pairs`, each board plays two games, colours swapped (an opening
  played from both sides); the colour a player is given is the one it has in the first game,
  and the rules above apply to it.

Pure and deterministic: the same players, rounds and rules give the same pairing.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from competition.matching import Matching

Colour = Literal["first", "second"]
"""`first` plays the game's player 0 (who moves first), `second` player 1."""

FIRST: Colour = "first"
SECOND: Colour = "second"


class SwissError(ValueError):
    """Rounds or players that a Swiss tournament cannot pair: a name twice, a board twice."""


@dataclass(frozen=True, slots=True)
class Entrant:
    """A player of the tournament: its name and rating (equal ratings are ordered by lot)."""

    id: str
    rating: float = 0.0


@dataclass(frozen=True, slots=True)
class SwissRules:
    """How a Swiss tournament plays: `game_pairs` (two games a board, colours swapped), the
    points a bye scores per game of a board, and the seed of the lots."""

    game_pairs: bool = False
    bye_points: float = 1.0
    seed: int = 0

    @property
    def games_per_board(self) -> int:
        """Return the games each board plays: 2 with game pairs, else 1."""
        return 2 if self.game_pairs else 1


@dataclass(frozen=True, slots=True)
class Pairing:
    """One board: `first` has the first colour (in the first game, with game pairs)."""

    first: str
    second: str


@dataclass(frozen=True, slots=True)
class SwissRound:
    """A round's boards, from the top, and who has the bye (None with an even count)."""

    pairings: tuple[Pairing, ...]
    bye: str | None = None


@dataclass(frozen=True, slots=True)
class BoardResult:
    """A board played: its players as paired, and the points each scored on it (over both
    games with game pairs)."""

    first: str
    second: str
    first_points: float
    second_points: float


@dataclass(frozen=True, slots=True)
class PlayedRound:
    """A round with its results."""

    results: tuple[BoardResult, ...]
    bye: str | None = None


@dataclass(slots=True)
class PlayerRecord:
    """What the rounds so far say about one player."""

    score: float = 0.0
    opponents: list[str] = field(default_factory=list)
    colours: list[Colour] = field(default_factory=list)
    byes: int = 0

    @property
    def colour_difference(self) -> int:
        """Return firsts minus seconds."""
        return sum(1 if colour == FIRST else -1 for colour in self.colours)


def player_records(rounds: Iterable[PlayedRound], rules: SwissRules) -> dict[str, PlayerRecord]:
    """Return every player's record over `rounds` (players of those rounds only).

    Raises SwissError if a player is on two boards of a round (or on a board and the bye).
    """
    records: dict[str, PlayerRecord] = {}
    bye_score = rules.bye_points * rules.games_per_board
    for number, played in enumerate(rounds, 1):
        seen: set[str] = set()
        for board in played.results:
            if board.first == board.second:
                raise SwissError(f"{board.first!r} plays itself in round {number}")
            for player in (board.first, board.second):
                if player in seen:
                    raise SwissError(f"{player!r} plays twice in round {number}")
                seen.add(player)
            first = records.setdefault(board.first, PlayerRecord())
            second = records.setdefault(board.second, PlayerRecord())
            first.score += board.first_points
            second.score += board.second_points
            first.opponents.append(board.second)
            second.opponents.append(board.first)
            first.colours.append(FIRST)
            second.colours.append(SECOND)
        if played.bye is not None:
            if played.bye in seen:
                raise SwissError(f"{played.bye!r} has the bye and a board in round {number}")
            record = records.setdefault(played.bye, PlayerRecord())
            record.score += bye_score
            record.byes += 1
    return records


def pairing_numbers(entrants: Sequence[Entrant], seed: int) -> dict[str, int]:
    """Return each player's pairing number from 0: highest rating first, ties by lot.

    The lot is a hash of the seed and the name, so it does not depend on the entrants' order.
    """
    names = [entrant.id for entrant in entrants]
    if len(set(names)) != len(names):
        twice = next(name for index, name in enumerate(names) if name in names[:index])
        raise SwissError(f"{twice!r} is entered twice")

    def lot(name: str) -> bytes:
        return hashlib.sha256(f"{seed}:{name}".encode()).digest()

    order = sorted(entrants, key=lambda entrant: (-entrant.rating, lot(entrant.id), entrant.id))
    return {entrant.id: number for number, entrant in enumerate(order)}


@dataclass(frozen=True, slots=True)
class _Preference:
    colour: Colour | None
    strength: int  # 0 none, 1 mild, 2 strong, 3 two in a row, 4 difference at the limit


def _preference(colours: Sequence[Colour]) -> _Preference:
    if not colours:
        return _Preference(None, 0)
    difference = sum(1 if colour == FIRST else -1 for colour in colours)
    if abs(difference) >= 2:
        return _Preference(SECOND if difference > 0 else FIRST, 4)
    last = colours[-1]
    other: Colour = SECOND if last == FIRST else FIRST
    if len(colours) >= 2 and colours[-2] == last:
        return _Preference(other, 3)
    if difference:
        return _Preference(SECOND if difference > 0 else FIRST, 2)
    return _Preference(other, 1)


def _clash(one: _Preference, other: _Preference, strength: int) -> bool:
    """Return whether both need the same colour at `strength` or above."""
    return (
        one.colour is not None
        and one.colour == other.colour
        and min(one.strength, other.strength) >= strength
    )


def pair_round(
    entrants: Sequence[Entrant], rounds: Sequence[PlayedRound], rules: SwissRules | None = None
) -> SwissRound:
    """Pair the next round of `entrants` after `rounds` by the rules of this module's docstring.

    Players of earlier rounds missing from `entrants` (withdrawn) are not paired; entrants
    absent from earlier rounds start with no points.
    """
    rules = rules or SwissRules()
    numbers = pairing_numbers(entrants, rules.seed)
    records = player_records(rounds, rules)
    for entrant in entrants:
        records.setdefault(entrant.id, PlayerRecord())
    order = sorted(numbers, key=lambda name: (-records[name].score, numbers[name]))
    if len(order) < 2:
        return SwissRound((), order[0] if order else None)
    rank = {name: index for index, name in enumerate(order)}
    met = [{rank[name] for name in records[player].opponents if name in rank} for player in order]
    preferences = [_preference(records[player].colours) for player in order]
    byes = [records[player].byes for player in order]

    def fresh(one: int, other: int) -> bool:
        return other not in met[one]

    tiers: list[Callable[[int, int], bool]] = [
        lambda a, b: fresh(a, b) and not _clash(preferences[a], preferences[b], 3),
        lambda a, b: fresh(a, b) and not _clash(preferences[a], preferences[b], 4),
        fresh,
        lambda a, b: True,
    ]
    for allowed in tiers:
        paired = _pair_tier(order, records, byes, met, preferences, allowed)
        if paired is not None:
            boards, bye = paired
            break
    else:  # pragma: no cover - the last tier allows every pair
        raise AssertionError("a complete graph always has a pairing")
    return SwissRound(_colour_boards(boards, order, records, preferences, rules.seed), bye)


def _pair_tier(
    order: list[str],
    records: dict[str, PlayerRecord],
    byes: list[int],
    met: list[set[int]],
    preferences: list[_Preference],
    allowed: Callable[[int, int], bool],
) -> tuple[list[tuple[int, int]], str | None] | None:
    """Return the boards (by rank) and the bye if every player can be paired by `allowed`."""
    count = len(order)
    adjacency = [[b for b in range(count) if b != a and allowed(a, b)] for a in range(count)]
    matching = Matching(adjacency)
    if matching.size < count // 2:
        return None
    paired = [False] * count
    bye: str | None = None
    if count % 2:
        fewest = min(byes)
        candidates = [v for v in reversed(range(count)) if byes[v] == fewest]
        chosen = next((v for v in candidates if matching.remove(v)), None)
        if chosen is None:
            return None
        paired[chosen] = True
        bye = order[chosen]
    groups: list[list[int]] = []
    for vertex in range(count):
        if groups and records[order[groups[-1][0]]].score == records[order[vertex]].score:
            groups[-1].append(vertex)
        else:
            groups.append([vertex])
    boards: list[tuple[int, int]] = []
    for index, group in enumerate(groups):
        residents = [v for v in group if not paired[v]]
        half = len(residents) // 2
        top, bottom = residents[:half], residents[half:]
        lower = [v for later in groups[index + 1 :] for v in later]
        for position, vertex in enumerate(residents):
            if paired[vertex]:
                continue
            if position < half:
                opposite = bottom[position:] + bottom[:position]
                opposite.sort(key=lambda v: _clash(preferences[vertex], preferences[v], 1))
                choices = opposite + top[position + 1 :] + lower
            else:
                choices = bottom[position - half + 1 :] + lower
            choices += range(count)  # the matching's mate is always among these
            choices.sort(key=lambda v: v in met[vertex])
            partner = next(
                v
                for v in choices
                if not paired[v] and v != vertex and allowed(vertex, v) and matching.fix(vertex, v)
            )
            paired[vertex] = paired[partner] = True
            boards.append((vertex, partner))
    return boards, bye


def _colour_boards(
    boards: list[tuple[int, int]],
    order: list[str],
    records: dict[str, PlayerRecord],
    preferences: list[_Preference],
    seed: int,
) -> tuple[Pairing, ...]:
    lot = random.Random(seed).random() < 0.5
    result = []
    for board, (one, other) in enumerate(sorted((min(b), max(b)) for b in boards)):
        higher, lower = preferences[one], preferences[other]
        colour = _colour_of_higher(
            higher, lower, records[order[one]].colours, records[order[other]].colours
        )
        if colour is None:
            colour = FIRST if (board % 2 == 0) == lot else SECOND
        first, second = (one, other) if colour == FIRST else (other, one)
        result.append(Pairing(order[first], order[second]))
    return tuple(result)


def _colour_of_higher(
    higher: _Preference,
    lower: _Preference,
    higher_colours: Sequence[Colour],
    lower_colours: Sequence[Colour],
) -> Colour | None:
    """Return the colour of the higher-ranked player of a board (None: no one has a wish)."""
    if higher.colour is None and lower.colour is None:
        return None
    if lower.colour is None:
        return higher.colour
    lower_gets = lower.colour
    other: Colour = SECOND if lower_gets == FIRST else FIRST
    if higher.colour is None or higher.colour != lower.colour:
        return other
    if higher.strength != lower.strength:
        return higher.colour if higher.strength > lower.strength else other
    for mine, theirs in zip(reversed(higher_colours), reversed(lower_colours), strict=False):
        if mine != theirs:
            return SECOND if mine == FIRST else FIRST
    return higher.colour
