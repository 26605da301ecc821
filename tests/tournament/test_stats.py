"""Tournament statistics: crosstable counts, Davidson Elo fits against hand-computed values."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tournament.stats import (
    ELO_PER_NATURAL,
    Z95,
    GameResult,
    Record,
    StatsError,
    build_crosstable,
    fit_elo,
    format_table,
    likelihood_of_superiority,
    to_dict,
)


def games_between(
    a: str, b: str, first_scores: Sequence[float], *, pair_from: int | None = None
) -> list[GameResult]:
    """Return one game per score with `a` moving first, then each colour-swapped with `b` first.

    `first_scores` are a's points when a moves first; the swapped game repeats the same result
    for a (so a's results do not depend on colour). With `pair_from`, game k and its swap share
    pair id pair_from + k.
    """
    result = []
    for k, score in enumerate(first_scores):
        pair = None if pair_from is None else pair_from + k
        result.append(GameResult(a, b, score, pair))
        result.append(GameResult(b, a, 1.0 - score, pair))
    return result


def test_crosstable_counts_are_exact() -> None:
    games = [
        GameResult("A", "B", 1.0),
        GameResult("B", "A", 0.5),
        GameResult("A", "B", 0.0),
        GameResult("C", "A", 1.0),
        GameResult("B", "C", 0.5, pair=7),
        GameResult("C", "B", 0.0, pair=7),
    ]
    table = build_crosstable(games)
    assert table.bots == ("A", "B", "C")
    assert table.head_to_head[("A", "B")] == Record(games=3, wins=1, draws=1, losses=1)
    assert table.head_to_head[("B", "A")] == Record(games=3, wins=1, draws=1, losses=1)
    assert table.head_to_head[("A", "C")] == Record(games=1, wins=0, draws=0, losses=1)
    assert table.head_to_head[("B", "C")] == Record(games=2, wins=1, draws=1, losses=0)
    assert table.head_to_head[("C", "B")].points == 0.5
    assert table.totals["A"] == Record(games=4, wins=1, draws=1, losses=2)
    assert table.totals["A"].points == 1.5
    assert table.totals["B"].points == 3.0
    assert table.totals["C"] == Record(games=3, wins=1, draws=1, losses=1)
    assert sum(record.points for record in table.totals.values()) == len(games)


def test_no_draws_reduces_to_bradley_terry() -> None:
    """A scores 3/4 with each colour, no draws, no prior.

    With no draws nu = 0 and Davidson is Bradley-Terry; equal results with both colours make
    the first-move advantage 0. The MLE then matches the score: 1 / (1 + 10^(-d/400)) = 0.75,
    so d = 400 * log10(0.75 / 0.25) = 400 * log10(3) = 190.849 Elo, i.e. +-95.42 around 0.
    """
    fit = fit_elo(games_between("A", "B", [1, 1, 1, 0]), prior_draws=0)
    assert fit.draw_nu == 0.0
    assert fit.first_move_advantage == pytest.approx(0.0, abs=1e-9)
    assert fit.rating("A").elo == pytest.approx(400 * math.log10(3) / 2, abs=1e-9)
    assert fit.rating("B").elo == pytest.approx(-400 * math.log10(3) / 2, abs=1e-9)
    assert fit.rating("A").score == 0.75 and fit.rating("A").points == 6.0


def test_davidson_with_draws_matches_hand_values() -> None:
    """A: 6 wins, 3 draws, 1 loss with each colour (15/20 points), no prior.

    The model is saturated once the advantage is 0 (symmetric in colour), so the MLE matches
    the frequencies: e^x = P(win)/P(loss) = 12/2 -> d = 400*log10(6) = 311.25 Elo (more than
    the 190.85 a draw-free 75% gives: a draw is not half a win), and
    nu = P(draw)/sqrt(P(win)P(loss)) = 6/sqrt(12*2) = 1.2247.
    """
    fit = fit_elo(games_between("A", "B", [1] * 6 + [0.5] * 3 + [0]), prior_draws=0, anchor="B")
    assert fit.rating("B").elo == 0.0
    assert fit.rating("A").elo == pytest.approx(400 * math.log10(6), abs=1e-7)
    assert fit.draw_nu == pytest.approx(6 / math.sqrt(24), abs=1e-9)
    assert fit.equal_draw_rate == pytest.approx(fit.draw_nu / (2 + fit.draw_nu))
    assert fit.first_move_advantage == pytest.approx(0.0, abs=1e-7)
    assert fit.rating("A").points == 15.0


def test_interval_of_unpaired_games_is_the_binomial_logit_error() -> None:
    """8 independent games, A wins 6, no advantage, no prior, B anchored at 0.

    Sandwich with one game per unit: A = N p(1-p), B = N/(N-1) * sum (s - p)^2 = N/(N-1) N p(1-p),
    so var(d) = N/(N-1) / (N p (1-p)) = 8/7 / 1.5 in natural units, times (400/ln 10)^2.
    """
    games = [GameResult("A", "B", 1.0)] * 6 + [GameResult("B", "A", 1.0)] * 2
    fit = fit_elo(games, prior_draws=0, first_move_advantage=False, anchor="B")
    sigma = ELO_PER_NATURAL * math.sqrt(8 / 7 / 1.5)
    a = fit.rating("A")
    assert a.elo == pytest.approx(400 * math.log10(3), abs=1e-9)
    assert a.upper - a.elo == pytest.approx(Z95 * sigma, rel=1e-9)
    assert a.elo - a.lower == pytest.approx(Z95 * sigma, rel=1e-9)
    assert fit.rating("B").lower == fit.rating("B").upper == 0.0
    assert fit.units == 8
    assert fit.variance_of_difference("A", "B") == pytest.approx(sigma**2, rel=1e-9)


def test_symmetric_results_give_zero_difference_and_los_half() -> None:
    games = [
        *games_between("A", "B", [1, 0], pair_from=0),  # A wins one pair, B the other
        GameResult("A", "B", 1.0, pair=5),  # each first mover wins
        GameResult("B", "A", 1.0, pair=5),
        GameResult("A", "B", 0.5, pair=6),
        GameResult("B", "A", 0.5, pair=6),
    ]
    fit = fit_elo(games)
    assert fit.rating("A").elo == pytest.approx(0.0, abs=1e-9)
    assert fit.rating("B").elo == pytest.approx(0.0, abs=1e-9)
    assert fit.los("A", "B") == pytest.approx(0.5, abs=1e-9)
    assert fit.first_move_advantage > 0.0
    assert fit.units == 4


def test_winner_of_every_game_gets_a_finite_top_rating() -> None:
    games = (
        games_between("A", "B", [1] * 5)
        + games_between("A", "C", [1] * 5)
        + games_between("B", "C", [1, 0, 0.5, 1, 0])
    )
    fit = fit_elo(games)
    a, b, c = fit.rating("A"), fit.rating("B"), fit.rating("C")
    assert all(math.isfinite(x) for x in (a.elo, a.lower, a.upper))
    assert a.elo > b.elo + 200 and a.elo > c.elo + 200
    assert b.elo == pytest.approx(c.elo, abs=1e-9)  # B and C are symmetric
    assert fit.bots[0] == "A"
    with pytest.raises(StatsError, match="prior_draws > 0"):
        fit_elo(games, prior_draws=0)
    with pytest.raises(StatsError, match="prior_draws > 0"):
        fit_elo(games_between("A", "B", [1, 1]), prior_draws=0)
    with pytest.raises(StatsError, match="prior_draws > 0"):
        fit_elo(games_between("A", "B", [0.5, 0.5]), prior_draws=0)


def test_first_move_advantage_is_recovered() -> None:
    """Every first mover scores 7/10 against every opponent, three bots, no draws.

    Ratings are equal by symmetry, so P(first wins) = 1/(1 + 10^(-adv/400)) = 0.7 and the
    advantage is 400*log10(0.7/0.3) = 147.19 Elo (exact without prior).
    """
    games = [
        GameResult(first, second, score)
        for first in "ABC"
        for second in "ABC"
        if first != second
        for score in [1.0] * 7 + [0.0] * 3
    ]
    exact = fit_elo(games, prior_draws=0)
    assert exact.first_move_advantage == pytest.approx(400 * math.log10(7 / 3), abs=1e-7)
    assert all(r.elo == pytest.approx(0.0, abs=1e-9) for r in exact.ratings)
    low, high = exact.first_move_interval
    assert low < exact.first_move_advantage < high
    assert low > 0.0
    # The default prior (one virtual draw per bot) moves it only a little.
    shrunk = fit_elo(games)
    assert shrunk.first_move_advantage == pytest.approx(147.19, abs=10.0)
    assert all(r.elo == pytest.approx(0.0, abs=1e-9) for r in shrunk.ratings)


def varied_pairs(repeats: int) -> list[GameResult]:
    """Return `repeats` copies of four colour-swapped pairs: A wins both, 1-1, 1-1, B wins both;
    plus one A-wins-both pair per copy so that A is ahead."""
    games: list[GameResult] = []
    pair = 0
    for _ in range(repeats):
        for a_first, b_first in ((1.0, 0.0), (1.0, 1.0), (0.5, 0.5), (0.0, 1.0), (1.0, 0.0)):
            games.append(GameResult("A", "B", a_first, pair))
            games.append(GameResult("B", "A", b_first, pair))
            pair += 1
    return games


def test_interval_widens_with_fewer_games() -> None:
    few, many = fit_elo(varied_pairs(2)), fit_elo(varied_pairs(8))
    width_few = few.rating("A").upper - few.rating("A").lower
    width_many = many.rating("A").upper - many.rating("A").lower
    assert width_few > width_many
    # Four times the pairs: about half the width (the 1/sqrt(n) law; prior and G/(G-1) bend it).
    assert 1.6 < width_few / width_many < 2.6
    assert few.los("A", "B") < many.los("A", "B")


def test_pairs_are_the_independent_units() -> None:
    """Openings that favour one colour (either one) split most pairs 1-1.

    4 openings the first mover wins twice, 4 the second mover wins twice, 2 A wins twice: the
    advantage is 0 and A scores 12/20. As pairs, A's pair scores are 1,1,...,2,2 (little
    spread); as 20 separate games they are 0/1 scores with much more spread. Same estimates,
    narrower pair-level interval.
    """
    pairs = [(1.0, 1.0)] * 4 + [(0.0, 0.0)] * 4 + [(1.0, 0.0)] * 2
    paired = [
        game
        for pair, (a_first, b_first) in enumerate(pairs)
        for game in (GameResult("A", "B", a_first, pair), GameResult("B", "A", b_first, pair))
    ]
    unpaired = [GameResult(g.first, g.second, g.score) for g in paired]
    fit_paired, fit_unpaired = fit_elo(paired), fit_elo(unpaired)
    assert fit_paired.units == 10 and fit_unpaired.units == 20
    assert fit_paired.first_move_advantage == pytest.approx(0.0, abs=1e-9)
    assert fit_paired.rating("A").elo == fit_unpaired.rating("A").elo > 0.0
    width_paired = fit_paired.rating("A").upper - fit_paired.rating("A").lower
    width_unpaired = fit_unpaired.rating("A").upper - fit_unpaired.rating("A").lower
    assert width_paired < 0.6 * width_unpaired
    assert fit_paired.los("A", "B") > fit_unpaired.los("A", "B")


def test_los_is_complementary_and_favours_the_stronger() -> None:
    games = games_between("A", "B", [1, 1, 0.5, 0, 1, 1], pair_from=0) + games_between(
        "B", "C", [1, 0.5, 0, 1], pair_from=10
    )
    fit = fit_elo(games)
    los = likelihood_of_superiority(fit)
    for a in "ABC":
        assert los[a][a] == 0.5
        for b in "ABC":
            assert los[a][b] + los[b][a] == pytest.approx(1.0, abs=1e-12)
    assert los["A"]["B"] > 0.5 and los["A"]["C"] > los["A"]["B"]
    diff = fit.rating("A").elo - fit.rating("B").elo
    expected = 0.5 * (1 + math.erf(diff / math.sqrt(2 * fit.variance_of_difference("A", "B"))))
    assert los["A"]["B"] == pytest.approx(expected, abs=1e-12)


def test_three_transitive_bots_rank_in_order() -> None:
    games = (
        games_between("A", "B", [1] * 7 + [0] * 3)
        + games_between("B", "C", [1] * 7 + [0] * 3)
        + games_between("A", "C", [1] * 17 + [0] * 3)
    )
    fit = fit_elo(games)
    assert fit.bots == ("A", "B", "C")
    a, b, c = (fit.rating(x).elo for x in "ABC")
    assert a - b == pytest.approx(b - c, rel=0.25)
    assert sum((a, b, c)) == pytest.approx(0.0, abs=1e-9)


def test_anchor_shifts_ratings_and_intervals() -> None:
    games = games_between("A", "B", [1, 0.5, 1, 0], pair_from=0) + games_between(
        "C", "B", [0, 0.5, 1], pair_from=10
    )
    centred, anchored = fit_elo(games), fit_elo(games, anchor="C")
    shift = centred.rating("C").elo
    for bot in "ABC":
        assert anchored.rating(bot).elo == pytest.approx(centred.rating(bot).elo - shift, abs=1e-9)
        assert anchored.los("A", bot) == pytest.approx(centred.los("A", bot), abs=1e-9)
    assert anchored.rating("C").elo == 0.0
    assert anchored.rating("C").lower == anchored.rating("C").upper == 0.0


def test_bad_input_is_rejected_with_a_reason() -> None:
    with pytest.raises(StatsError, match="no games"):
        fit_elo([])
    with pytest.raises(StatsError, match=r"1, 0.5 or 0"):
        fit_elo([GameResult("A", "B", 0.25)])
    with pytest.raises(StatsError, match="itself"):
        build_crosstable([GameResult("A", "A", 1.0)])
    with pytest.raises(StatsError, match="choose one of: A, B"):
        fit_elo([GameResult("A", "B", 1.0)], anchor="Z")


def test_report_dict_is_json_and_table_lists_everything() -> None:
    games = games_between("A", "B", [1, 0.5], pair_from=0)
    table, fit = build_crosstable(games), fit_elo(games)
    report = to_dict(table, fit)
    assert json.loads(json.dumps(report, allow_nan=False)) == report
    assert report["model"] == "davidson"
    assert [r["bot"] for r in report["ratings"]] == ["A", "B"]
    assert report["crosstable"]["A"]["B"] == {
        "games": 4, "wins": 2, "draws": 2, "losses": 0, "points": 3.0,
    }  # fmt: skip
    assert report["los"]["A"]["B"] > 0.5
    text = format_table(table, fit)
    assert "3/4" in text and "1/4" in text
    assert text.splitlines()[1].split()[:2] == ["1", "A"]
    assert "first-move advantage" in text

    single = [GameResult("A", "B", 1.0, pair=1), GameResult("B", "A", 0.0, pair=1)]
    lone = to_dict(build_crosstable(single), fit_elo(single))
    assert lone["units"] == 1
    assert lone["ratings"][0]["lower"] is None and lone["ratings"][0]["upper"] is None
    json.dumps(lone, allow_nan=False)


game_strategy = st.builds(
    GameResult,
    first=st.sampled_from("ABCD"),
    second=st.sampled_from("ABCD"),
    score=st.sampled_from([0.0, 0.5, 1.0]),
    pair=st.one_of(st.none(), st.integers(0, 5)),
).filter(lambda game: game.first != game.second)


@settings(max_examples=40, deadline=None)
@given(games=st.lists(game_strategy, min_size=1, max_size=25), data=st.data())
def test_ratings_are_invariant_to_order_centred_and_flip_with_results(
    games: list[GameResult], data: st.DataObject
) -> None:
    fit = fit_elo(games)
    elo = {r.bot: r.elo for r in fit.ratings}
    assert sum(elo.values()) == pytest.approx(0.0, abs=1e-6)

    shuffled = fit_elo(data.draw(st.permutations(games)))
    for r in shuffled.ratings:
        assert r.elo == pytest.approx(elo[r.bot], abs=1e-6)
        # abs: a zero-width interval is the square root of a variance that is zero up to rounding
        assert r.upper - r.lower == pytest.approx(
            fit.rating(r.bot).upper - fit.rating(r.bot).lower, rel=1e-6, abs=1e-4
        )

    flipped = fit_elo([GameResult(g.first, g.second, 1.0 - g.score, g.pair) for g in games])
    for r in flipped.ratings:
        assert r.elo == pytest.approx(-elo[r.bot], abs=1e-6)
    assert flipped.first_move_advantage == pytest.approx(-fit.first_move_advantage, abs=1e-6)
    assert flipped.draw_nu == pytest.approx(fit.draw_nu, rel=1e-6)
    strictly_better = [(a, b) for a in elo for b in elo if elo[a] > elo[b] + 1e-6]
    for a, b in strictly_better:
        assert flipped.rating(b).elo > flipped.rating(a).elo
