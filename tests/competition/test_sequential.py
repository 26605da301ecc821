"""The SPRT match runner: pairs counted only when complete, stopping at the decision, resuming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bots.spec import Bot, create_bot
from competition.journal import JournalError
from competition.openings import default_openings
from competition.runner import GameRecord, TournamentError, TournamentSpec
from competition.sequential import (
    OrderedTally,
    SprtStatus,
    _Tally,
    match_identity,
    ordered_status,
    pair_tasks,
    run_sprt,
)
from competition.stats.sprt import SprtTest, Verdict
from games import Game
from games.match import ResultCode

SPEC = TournamentSpec(game="tictactoe", bots=("alphabeta:depth=1", "random"), seed=4)
OPENINGS = default_openings("tictactoe", 4, 4)
TEST = SprtTest(0, 50)


def record(index: int, first_score: float) -> GameRecord:
    first, second = SPEC.bots if index % 2 == 0 else SPEC.bots[::-1]
    return GameRecord(index, index // 2, first, second, "o", (), first_score, "", ResultCode.LINE)


def test_a_pair_counts_only_when_both_its_games_are_finished() -> None:
    tally = _Tally(SPEC, TEST, 100)
    tally.add(record(0, 1.0))  # pair 0: its first game only
    assert tally.status().pairs == 0 and tally.llr == 0
    tally.add(record(3, 0.5))
    tally.add(record(2, 1.0))  # pair 1 complete: the first bot won one game and drew one
    status = tally.status()
    assert status.pentanomial == (0, 0, 0, 1, 0)
    assert (status.wins, status.draws, status.losses) == (1, 1, 0)
    assert status.llr == pytest.approx(TEST.llr([0, 0, 0, 1, 0]))
    assert [r.index for r in tally.completed()] == [2, 3]


def test_pairs_swap_colours_and_deal_the_openings_in_turn() -> None:
    tasks = list(pair_tasks(SPEC, OPENINGS, 6))
    assert [(t.index, t.pair) for t in tasks] == [(i, i // 2) for i in range(12)]
    for a, b in zip(tasks[::2], tasks[1::2], strict=True):
        assert (a.first, a.second) == (b.second, b.first) == SPEC.bots
        assert a.opening == b.opening
    starts = [t.opening for t in tasks[::2]]
    assert starts[4:] == starts[:2] and len(set(starts[:4])) == 4


def test_the_identity_ignores_the_cap_but_not_the_test_or_openings() -> None:
    base = match_identity(SPEC, TEST, OPENINGS)
    assert base == match_identity(SPEC, TEST, OPENINGS)
    assert base != match_identity(SPEC, SprtTest(0, 20), OPENINGS)
    assert base != match_identity(SPEC, TEST, OPENINGS[::-1][:3])


def test_the_match_stops_at_the_decision_and_a_rerun_plays_nothing(tmp_path: Path) -> None:
    journal = tmp_path / "m.journal"
    seen: list[SprtStatus] = []
    status, records = run_sprt(
        SPEC, TEST, OPENINGS, 400, journal_path=journal, progress=lambda s, _: seen.append(s)
    )
    assert status.verdict is Verdict.H1
    assert status.games == len(records) < 400
    assert all(s.verdict is None for s in seen[:-1]) and seen[-1] == status
    lines = journal.read_text().splitlines()
    assert len(lines) == 1 + len(records)

    def refuse(spec: str, game: Game) -> Bot:
        raise AssertionError("a decided match plays no more games")

    again, again_records = run_sprt(
        SPEC, TEST, OPENINGS, 400, journal_path=journal, bot_factory=refuse
    )
    assert again == status and again_records == records


def test_a_half_played_pair_is_completed_on_resume(tmp_path: Path) -> None:
    journal = tmp_path / "m.journal"
    full, full_records = run_sprt(SPEC, TEST, OPENINGS, 400)
    # A journal cut after the first game of pair 3, with its header as the match writes it.
    header = {"kind": "header", "version": 2, "tournament": match_identity(SPEC, TEST, OPENINGS)}
    games = [{"kind": "game", "game": r.to_dict()} for r in full_records[:7]]
    journal.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in [header, *games]))
    played: list[str] = []

    def counting(spec: str, game: Game) -> Bot:
        played.append(spec)
        return create_bot(spec, game)

    status, records = run_sprt(
        SPEC, TEST, OPENINGS, 400, journal_path=journal, bot_factory=counting
    )
    assert status == full
    assert [(r.index, r.moves, r.result) for r in records] == [
        (r.index, r.moves, r.result) for r in full_records
    ]
    assert len(played) == 2 * (len(full_records) - 7)  # two bots per game not in the journal


def test_a_cap_without_decision_is_inconclusive_and_a_larger_cap_continues(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "m.journal"
    status, records = run_sprt(SPEC, TEST, OPENINGS, 6, journal_path=journal)
    assert status.verdict is Verdict.INCONCLUSIVE and len(records) == 6
    more, more_records = run_sprt(SPEC, TEST, OPENINGS, 10, journal_path=journal)
    assert more_records[:6] == records and len(more_records) == 10
    assert more == run_sprt(SPEC, TEST, OPENINGS, 10)[0]


def test_another_match_in_the_journal_is_refused(tmp_path: Path) -> None:
    journal = tmp_path / "m.journal"
    run_sprt(SPEC, TEST, OPENINGS, 2, journal_path=journal)
    with pytest.raises(JournalError, match="differs in: sprt"):
        run_sprt(SPEC, SprtTest(0, 10), OPENINGS, 2, journal_path=journal)


@pytest.mark.parametrize(
    ("spec", "cap", "message"),
    [
        (TournamentSpec(game="nim", bots=("random", "greedy", "minimax")), 10, "2 bots"),
        (SPEC, 5, "even"),
        (SPEC, 0, "at least 2"),
    ],
)
def test_bad_matches_are_refused(spec: TournamentSpec, cap: int, message: str) -> None:
    with pytest.raises(TournamentError, match=message):
        run_sprt(spec, TEST, OPENINGS, cap)


def test_an_ordered_tally_counts_pairs_in_schedule_order_only() -> None:
    tally = OrderedTally(SPEC, TEST, 100)
    # Pair 1 is complete but pair 0 is not: nothing counts yet.
    assert not tally.advance({1: 1.0, 2: 1.0, 3: 0.5})
    assert tally.pairs == 0 and tally.status().llr == 0
    assert tally.advance({0: 1.0, 1: 1.0, 2: 1.0, 3: 0.5})
    status = tally.status()
    assert status.pentanomial == (0, 0, 0, 1, 1)
    assert (status.wins, status.draws, status.losses) == (3, 1, 0)
    assert status.llr == pytest.approx(TEST.llr([0, 0, 0, 1, 1]))


def test_an_ordered_tally_stops_at_the_decision_whatever_finishes_later() -> None:
    wins = {index: 1.0 for index in range(200)}
    status = ordered_status(SPEC, TEST, 200, wins)
    assert status.verdict is Verdict.H1 and 0 < status.pairs < 100
    # The same games in steps, and games beyond the decision, change nothing.
    tally = OrderedTally(SPEC, TEST, 200)
    for end in range(0, 201, 3):
        tally.advance({i: s for i, s in wins.items() if i < end})
    assert tally.status() == status
    decided = {i: s for i, s in wins.items() if i < status.games}
    assert ordered_status(SPEC, TEST, 200, decided) == status
    # The local runner's tally, fed the same games in order, agrees.
    local = _Tally(SPEC, TEST, 200)
    for index in range(status.games):
        local.add(record(index, 1.0 if index % 2 == 0 else 0.0))  # the first bot wins each
    assert local.status() == status


def test_an_ordered_tally_is_inconclusive_at_its_cap() -> None:
    # Each bot wins with the first move: every pair is even.
    even = {index: 1.0 if index % 2 == 0 else 0.0 for index in range(12)}
    status = ordered_status(SPEC, TEST, 6, even)
    assert status.pairs == 3 and status.pentanomial == (0, 0, 3, 0, 0)
    assert status.verdict is Verdict.INCONCLUSIVE
    with pytest.raises(TournamentError, match="even"):
        OrderedTally(SPEC, TEST, 5)
