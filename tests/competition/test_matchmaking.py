"""The rated pool's matchmaking: its rules over random pools, and its closeness to random
pairing over many seeds."""

from __future__ import annotations

import random
import statistics
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from competition.matchmaking import (
    MatchmakingError,
    PoolBot,
    PoolRules,
    may_meet,
    pool_pairings,
)
from competition.swiss import FIRST, SECOND, Colour, Pairing


@st.composite
def pools(draw: st.DrawFn) -> tuple[list[PoolBot], dict[str, int], PoolRules, int]:
    count = draw(st.integers(0, 40))
    owners = [f"o{i}" for i in range(draw(st.integers(1, 8)))]
    names = [f"b{i}" for i in range(count)]
    colours = st.lists(st.sampled_from([FIRST, SECOND]), max_size=6).map(tuple)
    bots = [
        PoolBot(
            id=name,
            owner=draw(st.sampled_from(owners)),
            rating=draw(st.floats(800, 2400)),
            deviation=draw(st.floats(0, 350)),
            recent_opponents=tuple(draw(st.lists(st.sampled_from(names), max_size=3)))
            if names
            else (),
            colours=draw(colours),
        )
        for name in names
    ]
    playing = draw(st.dictionaries(st.sampled_from(owners), st.integers(0, 3)))
    rules = PoolRules(
        owner_cap=draw(st.integers(1, 4)),
        spread=draw(st.floats(0, 300)),
        max_gap=draw(st.none() | st.floats(0, 1000)),
        same_owner=draw(st.booleans()),
    )
    return bots, playing, rules, draw(st.integers(0, 2**32))


@settings(max_examples=150, deadline=None)
@given(pools())
def test_pairings_keep_every_rule(
    pool: tuple[list[PoolBot], dict[str, int], PoolRules, int],
) -> None:
    bots, playing, rules, seed = pool
    by_name = {bot.id: bot for bot in bots}
    pairings = pool_pairings(bots, playing=playing, rules=rules, seed=seed)
    seated = [name for pairing in pairings for name in (pairing.first, pairing.second)]
    assert len(seated) == len(set(seated))  # no bot paired twice
    assert set(seated) <= set(by_name)
    games = Counter(playing)
    for pairing in pairings:
        one, other = by_name[pairing.first], by_name[pairing.second]
        # Never the same pair twice in a row, from either side.
        assert one.recent_opponents[-1:] != (other.id,)
        assert other.recent_opponents[-1:] != (one.id,)
        assert rules.same_owner or one.owner != other.owner
        assert rules.max_gap is None or abs(one.rating - other.rating) <= rules.max_gap
        for owner in {one.owner, other.owner}:
            games[owner] += 1
    for owner, count in games.items():
        assert count <= max(rules.owner_cap, playing.get(owner, 0))
        if count > playing.get(owner, 0):
            assert count <= rules.owner_cap
    # Whoever is left waiting could not have played anyone else left waiting.
    waiting = [bot for bot in bots if bot.id not in seated]
    for index, one in enumerate(waiting):
        for other in waiting[index + 1 :]:
            room = all(games[owner] < rules.owner_cap for owner in {one.owner, other.owner})
            assert not (room and may_meet(one, other, rules))


@settings(max_examples=40, deadline=None)
@given(pools())
def test_the_same_seed_gives_the_same_pairings(
    pool: tuple[list[PoolBot], dict[str, int], PoolRules, int],
) -> None:
    bots, playing, rules, seed = pool
    assert pool_pairings(bots, playing=playing, rules=rules, seed=seed) == pool_pairings(
        bots, playing=playing, rules=rules, seed=seed
    )


def _random_pairing(bots: list[PoolBot], generator: random.Random) -> list[Pairing]:
    shuffled = list(bots)
    generator.shuffle(shuffled)
    return [Pairing(a.id, b.id) for a, b in zip(shuffled[::2], shuffled[1::2], strict=False)]


def _mean_gap(bots: list[PoolBot], pairings: list[Pairing] | tuple[Pairing, ...]) -> float:
    rating = {bot.id: bot.rating for bot in bots}
    return statistics.fmean(abs(rating[p.first] - rating[p.second]) for p in pairings)


def test_pairings_are_closer_in_rating_than_random_ones() -> None:
    # Fixed seeds: the same pools and draws every run. Ratings spread like a class's bots;
    # each bot has its own owner so only closeness (and the seeded jitter) decides.
    matched, random_gaps = [], []
    for seed in range(200):
        generator = random.Random(seed)
        bots = [
            PoolBot(f"b{i}", f"o{i}", generator.uniform(1000, 2000), generator.uniform(30, 200))
            for i in range(30)
        ]
        matched.append(_mean_gap(bots, pool_pairings(bots, seed=seed)))
        random_gaps.append(_mean_gap(bots, _random_pairing(bots, generator)))
    # Random pairs of a uniform spread of 1000 are about 333 apart; neighbours are far closer.
    assert statistics.fmean(matched) < statistics.fmean(random_gaps) / 3
    assert sum(m < r for m, r in zip(matched, random_gaps, strict=True)) >= 195


def test_the_jitter_varies_the_pairings_between_seeds() -> None:
    bots = [PoolBot(f"b{i}", f"o{i}", 1500.0 + i) for i in range(10)]
    seen = {pool_pairings(bots, seed=seed) for seed in range(20)}
    assert len(seen) > 1
    assert {len(pairings) for pairings in seen} == {5}


def test_the_last_opponent_is_skipped_for_the_next_nearest() -> None:
    a = PoolBot("a", "x", 1500.0, recent_opponents=("b",))
    b = PoolBot("b", "y", 1501.0, recent_opponents=("a",))
    c = PoolBot("c", "z", 1900.0)
    rules = PoolRules(spread=0.0)
    pairings = pool_pairings([a, b, c], rules=rules)
    assert len(pairings) == 1
    assert {pairings[0].first, pairings[0].second} in ({"a", "c"}, {"b", "c"})
    # A rematch later on is fine: only twice in a row is not.
    a_later = PoolBot("a", "x", 1500.0, recent_opponents=("b", "c"))
    b_later = PoolBot("b", "y", 1501.0, recent_opponents=("a", "c"))
    assert len(pool_pairings([a_later, b_later], rules=rules)) == 1


def test_a_pool_of_two_bots_lets_them_meet_again_and_again() -> None:
    a = PoolBot("a", "x", 1500.0, recent_opponents=("b",), colours=(FIRST,))
    b = PoolBot("b", "y", 1501.0, recent_opponents=("a",), colours=(SECOND,))
    rules = PoolRules(spread=0.0)
    # With a third bot in the pool (playing elsewhere now) they wait for it...
    assert pool_pairings([a, b], rules=rules, pool_size=3) == ()
    assert pool_pairings([a, b], rules=rules) == ()
    # ...but two bots alone would never play again: they meet, colours swapped.
    (pairing,) = pool_pairings([a, b], rules=rules, pool_size=2)
    assert (pairing.first, pairing.second) == ("b", "a")


def test_an_owner_at_its_cap_waits() -> None:
    bots = [PoolBot(f"b{i}", "crowd" if i < 4 else f"o{i}", 1500.0 + i) for i in range(8)]
    pairings = pool_pairings(bots, playing={"crowd": 1}, rules=PoolRules(owner_cap=2, spread=0.0))
    crowd = [p for p in pairings if {p.first, p.second} & {"b0", "b1", "b2", "b3"}]
    assert len(crowd) == 1
    assert not pool_pairings(bots[:4] + bots[4:5], playing={"crowd": 2})


def _bot(name: str, colours: tuple[Colour, ...]) -> PoolBot:
    return PoolBot(name, name, 1500.0, colours=colours)


def test_colours_go_to_whoever_had_the_other_one_more() -> None:
    rules = PoolRules(spread=0.0)
    (pairing,) = pool_pairings([_bot("a", (FIRST, FIRST)), _bot("b", (SECOND,))], rules=rules)
    assert pairing == Pairing("b", "a")
    (pairing,) = pool_pairings(
        [_bot("a", (SECOND, FIRST)), _bot("b", (FIRST, SECOND))], rules=rules
    )
    assert pairing == Pairing("b", "a")
    firsts = {pool_pairings([_bot("a", ()), _bot("b", ())], seed=s)[0].first for s in range(20)}
    assert firsts == {"a", "b"}


def test_bad_pools_are_refused() -> None:
    with pytest.raises(MatchmakingError, match="waiting twice"):
        pool_pairings([_bot("a", ()), _bot("a", ())])
    with pytest.raises(MatchmakingError, match="owner_cap"):
        pool_pairings([], rules=PoolRules(owner_cap=0))
    with pytest.raises(MatchmakingError, match="spread"):
        pool_pairings([], rules=PoolRules(spread=-1.0))
    with pytest.raises(MatchmakingError, match="max_gap"):
        pool_pairings([], rules=PoolRules(max_gap=-1.0))
