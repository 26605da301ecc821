"""The Swiss pairing: its absolute rules over random tournaments, checked against a brute-force
search where a rule has to give way, the Dutch shape of its pairings, and the tie-breaks."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from competition.matching import Matching
from competition.swiss import (
    BoardResult,
    Entrant,
    Pairing,
    PlayedRound,
    SwissError,
    SwissRound,
    SwissRules,
    pair_round,
    pairing_numbers,
    player_records,
)
from competition.swiss_standings import swiss_standings


def _entrants(count: int, generator: random.Random) -> list[Entrant]:
    """Players with ratings from a few values, so that equal ratings need the lot."""
    return [Entrant(f"p{i}", generator.choice([0.0, 1400.0, 1500.0, 1600.0])) for i in range(count)]


def _result(pairing: Pairing, rules: SwissRules, generator: random.Random) -> BoardResult:
    games = rules.games_per_board
    points = sum(generator.choice([0.0, 0.5, 1.0]) for _ in range(games))
    return BoardResult(pairing.first, pairing.second, points, games - points)


def _check_round(entrants: list[Entrant], history: list[PlayedRound], paired: SwissRound) -> None:
    """Every entrant on exactly one board or the bye; the bye only when the count is odd and to a
    player with the fewest byes."""
    names = [entrant.id for entrant in entrants]
    seated = [name for board in paired.pairings for name in (board.first, board.second)]
    if paired.bye is not None:
        seated.append(paired.bye)
    assert sorted(seated) == sorted(names)
    assert (paired.bye is not None) == (len(names) % 2 == 1)
    if paired.bye is not None:
        byes = Counter(played.bye for played in history)
        assert byes[paired.bye] == min(byes[name] for name in names)


def _met(history: list[PlayedRound]) -> set[frozenset[str]]:
    return {
        frozenset((board.first, board.second)) for played in history for board in played.results
    }


def _differences(history: list[PlayedRound]) -> Counter[str]:
    difference: Counter[str] = Counter()
    for played in history:
        for board in played.results:
            difference[board.first] += 1
            difference[board.second] -= 1
    return difference


def _play(
    count: int,
    rounds: int,
    seed: int,
    rules: SwissRules,
    check: Callable[[list[Entrant], list[PlayedRound], SwissRound], None] = _check_round,
) -> tuple[list[Entrant], list[PlayedRound]]:
    generator = random.Random(seed)
    entrants = _entrants(count, generator)
    history: list[PlayedRound] = []
    for _ in range(rounds):
        paired = pair_round(entrants, history, rules)
        check(entrants, history, paired)
        results = tuple(_result(board, rules, generator) for board in paired.pairings)
        history.append(PlayedRound(results, paired.bye))
    return entrants, history


def _pairable(
    names: list[str], history: list[PlayedRound], allowed: Callable[[str, str], bool]
) -> bool:
    """Return whether some bye (to a player with the fewest byes) leaves the others pairable
    with `allowed` pairs only: by trying every pairing for up to 12 players, else by the
    blossom matching (checked against the same brute force in test_matching)."""

    @cache
    def pairable(left: frozenset[str]) -> bool:
        if not left:
            return True
        player = min(left)
        rest = left - {player}
        return any(allowed(player, other) and pairable(rest - {other}) for other in rest)

    def perfect(left: list[str]) -> bool:
        if len(left) <= 12:
            return pairable(frozenset(left))
        adjacency = [
            [j for j, other in enumerate(left) if other != one and allowed(one, other)]
            for one in left
        ]
        return Matching(adjacency).is_perfect

    if len(names) % 2 == 0:
        return perfect(names)
    byes = Counter(played.bye for played in history)
    fewest = min(byes[name] for name in names)
    return any(
        perfect([other for other in names if other != name])
        for name in names
        if byes[name] == fewest
    )


def _colours(history: list[PlayedRound]) -> dict[str, list[str]]:
    colours: dict[str, list[str]] = {}
    for played in history:
        for board in played.results:
            colours.setdefault(board.first, []).append("first")
            colours.setdefault(board.second, []).append("second")
    return colours


def _need(colours: list[str]) -> str | None:
    """The colour a player must have by the absolute rules: the other one at a difference of
    2, else the other one after two in a row."""
    difference = colours.count("first") - colours.count("second")
    if abs(difference) >= 2:
        return "second" if difference > 0 else "first"
    if len(colours) >= 2 and colours[-1] == colours[-2]:
        return "second" if colours[-1] == "first" else "first"
    return None


def _check_rules(entrants: list[Entrant], history: list[PlayedRound], paired: SwissRound) -> None:
    """The round seats everyone once, and each absolute rule gives way only when no pairing
    could have kept it and the rules above it: no rematch, then colour differences within
    +-2, then no colour three times in a row."""
    _check_round(entrants, history, paired)
    names = [entrant.id for entrant in entrants]
    met = _met(history)
    before = _colours(history)
    totals = _differences(history)
    difference = {name: totals[name] for name in names}

    def fresh(one: str, other: str) -> bool:
        return frozenset((one, other)) not in met

    def in_colour(one: str, other: str) -> bool:
        both_at_limit = abs(difference[one]) >= 2 and abs(difference[other]) >= 2
        return fresh(one, other) and not (both_at_limit and difference[one] * difference[other] > 0)

    def no_three(one: str, other: str) -> bool:
        need = _need(before.get(one, []))
        return fresh(one, other) and (need is None or need != _need(before.get(other, [])))

    if any(frozenset((b.first, b.second)) in met for b in paired.pairings):
        assert not _pairable(names, history, fresh)
    given = {b.first: "first" for b in paired.pairings} | {
        b.second: "second" for b in paired.pairings
    }
    for name, colour in given.items():
        shift = 1 if colour == "first" else -1
        if abs(difference[name] + shift) > 2 and abs(difference[name]) <= 2:
            assert not _pairable(names, history, in_colour)
        last = before.get(name, [])[-2:]
        if last == [colour, colour] and abs(difference[name]) <= 1:
            assert not _pairable(names, history, no_three)


rules_strategy = st.builds(SwissRules, game_pairs=st.booleans(), seed=st.integers(0, 2**16))


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 60), st.integers(0, 2**32), rules_strategy, st.data())
def test_no_rematch_while_the_not_yet_met_can_all_be_paired(
    count: int, seed: int, rules: SwissRules, data: st.DataObject
) -> None:
    # After r rounds everyone has at least count - 1 - r players left to meet; with r up to
    # count // 2 - 1 that is half the field or more, and (Dirac) a rematch-free pairing exists.
    rounds = data.draw(st.integers(1, max(1, count // 2)), label="rounds")
    _, history = _play(count, rounds, seed, rules, _check_rules)
    boards = _met_list(history)
    assert len(boards) == len(set(boards))


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 9), st.integers(0, 2**32), rules_strategy)
def test_rules_give_way_only_when_no_pairing_keeps_them(
    count: int, seed: int, rules: SwissRules
) -> None:
    # More rounds than players: rematches and colour clashes are forced sooner or later.
    _play(count, count + 3, seed, rules, _check_rules)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 25), st.integers(0, 2**32), rules_strategy)
def test_nobody_has_a_second_bye_before_everyone_has_one(
    count: int, seed: int, rules: SwissRules
) -> None:
    _, history = _play(count | 1, 2 * (count | 1) + 1, seed, rules)
    byes: Counter[str] = Counter()
    for played in history:
        assert played.bye is not None
        if byes[played.bye]:
            assert len(byes) == count | 1
        byes[played.bye] += 1
        assert max(byes.values()) - min(byes[f"p{i}"] for i in range(count | 1)) <= 1


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 30), st.integers(0, 2**32), rules_strategy)
def test_the_same_rounds_and_seed_give_the_same_pairing_whatever_the_entry_order(
    count: int, seed: int, rules: SwissRules
) -> None:
    entrants, history = _play(count, 3, seed, rules)
    shuffled = list(entrants)
    random.Random(seed).shuffle(shuffled)
    assert pair_round(entrants, history, rules) == pair_round(shuffled, history, rules)


def test_three_hundred_players_play_seven_rounds() -> None:
    for rules in (SwissRules(seed=7), SwissRules(game_pairs=True, seed=8)):
        _, history = _play(301, 7, 300, rules, _check_rules)
        assert len(history) == 7
        boards = _met_list(history)
        assert len(boards) == len(set(boards)) == 7 * 150


def _met_list(history: list[PlayedRound]) -> list[frozenset[str]]:
    return [frozenset((b.first, b.second)) for played in history for b in played.results]


def test_round_one_pairs_the_top_half_with_the_bottom_half_alternating_colours() -> None:
    entrants = [Entrant(f"p{i}", 2000.0 - 10 * i) for i in range(8)]
    paired = pair_round(entrants, [], SwissRules(seed=1))
    boards = [frozenset((board.first, board.second)) for board in paired.pairings]
    assert boards == [frozenset((f"p{i}", f"p{i + 4}")) for i in range(4)]
    higher_first = [board.first == f"p{i}" for i, board in enumerate(paired.pairings)]
    assert higher_first in ([True, False, True, False], [False, True, False, True])
    assert paired.bye is None


def test_the_seed_draws_the_top_board_colour() -> None:
    entrants = [Entrant(f"p{i}", 2000.0 - 10 * i) for i in range(4)]
    tops = {pair_round(entrants, [], SwissRules(seed=seed)).pairings[0].first for seed in range(20)}
    assert tops == {"p0", "p2"}


def test_winners_meet_winners_and_colours_alternate() -> None:
    entrants = [Entrant(f"p{i}", 2000.0 - 10 * i) for i in range(8)]
    rules = SwissRules(seed=1)
    first = pair_round(entrants, [], rules)
    higher = {f"p{i}" for i in range(4)}
    results = tuple(
        BoardResult(b.first, b.second, *((1.0, 0.0) if b.first in higher else (0.0, 1.0)))
        for b in first.pairings
    )
    second = pair_round(entrants, [PlayedRound(results)], rules)
    boards = [frozenset((b.first, b.second)) for b in second.pairings]
    # The winners p0..p3 had alternating colours: S1's p0 passes over p2 (who had p0's colour
    # too) for p3, so every player gets the other colour than in round one.
    assert boards[:2] == [frozenset(("p0", "p3")), frozenset(("p1", "p2"))]
    had_first = {b.first for b in first.pairings}
    assert all(board.first not in had_first for board in second.pairings)


def test_a_pairing_is_found_where_the_natural_one_strands_a_player() -> None:
    # B and C lead on one point but have met; B has met D too, and A has met C (X and Y have
    # withdrawn). The only pairing of new pairs is A-B, C-D: B floats down to A.
    def board(first: str, second: str) -> BoardResult:
        return BoardResult(first, second, 0.5, 0.5)

    history = [
        PlayedRound((board("A", "C"), board("D", "B"))),
        PlayedRound((board("B", "C"), board("X", "Y"))),
    ]
    entrants = [Entrant(name, 1500.0 - i) for i, name in enumerate("ABCD")]
    paired = pair_round(entrants, history, SwissRules())
    assert {frozenset((b.first, b.second)) for b in paired.pairings} == {
        frozenset("AB"),
        frozenset("CD"),
    }


def test_a_forced_rematch_still_seats_everyone() -> None:
    # Four players after a full round robin: every pair is a rematch.
    names = ["A", "B", "C", "D"]
    schedule = [[("A", "B"), ("C", "D")], [("A", "C"), ("B", "D")], [("A", "D"), ("B", "C")]]
    history = [PlayedRound(tuple(BoardResult(a, b, 1.0, 0.0) for a, b in rnd)) for rnd in schedule]
    entrants = [Entrant(name) for name in names]
    paired = pair_round(entrants, history, SwissRules())
    _check_round(entrants, history, paired)


def test_one_player_has_the_bye_and_none_pair_nothing() -> None:
    assert pair_round([Entrant("solo")], []) == SwissRound((), "solo")
    assert pair_round([], []) == SwissRound((), None)


def test_bad_rounds_are_refused() -> None:
    with pytest.raises(SwissError, match="entered twice"):
        pairing_numbers([Entrant("a"), Entrant("a")], 0)
    twice = PlayedRound((BoardResult("a", "b", 1, 0), BoardResult("a", "c", 1, 0)))
    with pytest.raises(SwissError, match="plays twice"):
        player_records([twice], SwissRules())
    with pytest.raises(SwissError, match="plays itself"):
        player_records([PlayedRound((BoardResult("a", "a", 1, 0),))], SwissRules())
    with pytest.raises(SwissError, match="bye and a board"):
        player_records([PlayedRound((BoardResult("a", "b", 1, 0),), "a")], SwissRules())


def test_standings_rank_by_score_then_buchholz_then_sonneborn_berger() -> None:
    # Round 1: A beats B, C draws D, E has the bye. Round 2: A draws C, E beats B, D has the bye.
    history = [
        PlayedRound((BoardResult("A", "B", 1, 0), BoardResult("C", "D", 0.5, 0.5)), "E"),
        PlayedRound((BoardResult("A", "C", 0.5, 0.5), BoardResult("E", "B", 1, 0)), "D"),
    ]
    entrants = [Entrant(name) for name in "ABCDE"]
    standings = {s.player: s for s in swiss_standings(entrants, history)}
    scores = {name: s.score for name, s in standings.items()}
    assert scores == {"A": 1.5, "B": 0.0, "C": 1.0, "D": 1.5, "E": 2.0}
    # Buchholz: opponents' scores, a bye counting as an opponent with the player's own score.
    assert standings["A"].buchholz == 0.0 + 1.0
    assert standings["D"].buchholz == 1.0 + 1.5
    assert standings["E"].buchholz == 2.0 + 0.0
    # Sonneborn-Berger: beaten opponents' scores plus half of drawn ones'; byes add nothing.
    assert standings["A"].sonneborn_berger == 0.0 + 0.5
    assert standings["D"].sonneborn_berger == 0.5
    ranked = [s.player for s in swiss_standings(entrants, history)]
    assert ranked == ["E", "D", "A", "C", "B"]
    assert [s.rank for s in swiss_standings(entrants, history)] == [1, 2, 3, 4, 5]


def test_game_pairs_score_both_games_and_a_bye_scores_per_game() -> None:
    rules = SwissRules(game_pairs=True, bye_points=0.5)
    history = [PlayedRound((BoardResult("A", "B", 1.5, 0.5),), "C")]
    records = player_records(history, rules)
    assert records["A"].score == 1.5
    assert records["C"].score == 1.0
    standings = swiss_standings([Entrant(n) for n in "ABC"], history, rules)
    a = next(s for s in standings if s.player == "A")
    assert a.sonneborn_berger == pytest.approx(0.75 * 0.5)
