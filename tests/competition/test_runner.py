"""Tournament scheduling, one game under the referee, resumable runs and `arena tournament`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bots.result import SearchResult
from bots.spec import Bot, create_bot
from cli.main import create_cli
from competition import runner as runner_module
from competition.journal import JournalError, read_journal
from competition.openings import Opening, random_openings
from competition.runner import (
    GameRecord,
    GameTask,
    TournamentError,
    TournamentSpec,
    play_game,
    run_tournament,
    schedule,
)
from games import Game, State
from games.match import ResultCode

TTT_OPENINGS = random_openings("tictactoe", 4, 2, seed=1)
STRONG = "alphabeta:depth=4"


def ttt_spec(**changes: Any) -> TournamentSpec:
    fields: dict[str, Any] = {
        "game": "tictactoe",
        "bots": ("random", STRONG),
        "games_per_pairing": 4,
        "seed": 3,
    }
    fields.update(changes)
    return TournamentSpec(**fields)


# -- schedule ------------------------------------------------------------------------------------


def test_schedule_is_deterministic_and_pairs_share_their_opening() -> None:
    spec = ttt_spec(bots=("random", STRONG, "greedy"), games_per_pairing=4)
    tasks = schedule(spec, TTT_OPENINGS)
    assert tasks == schedule(spec, TTT_OPENINGS)
    assert [t.index for t in tasks] == list(range(len(tasks)))
    assert len(tasks) == 3 * 4
    for a, b in zip(tasks[::2], tasks[1::2], strict=True):
        assert a.pair == b.pair  # one colour-swapped pair: the same opening, colours swapped
        assert a.pairing == b.pairing
        assert a.opening == b.opening
        assert (a.first, a.second) == (b.second, b.first)
    assert [t.pair for t in tasks] == [i // 2 for i in range(len(tasks))]
    # Two distinct openings per pairing (games_per_pairing / 2).
    assert len({t.opening.name for t in tasks if t.pairing == 0}) == 2


def test_round_robin_of_three_has_three_pairings_and_gauntlet_two() -> None:
    bots = ("random", STRONG, "greedy")
    round_robin = schedule(ttt_spec(bots=bots, games_per_pairing=2), TTT_OPENINGS)
    gauntlet = schedule(ttt_spec(bots=bots, format="gauntlet"), TTT_OPENINGS)
    assert {t.pairing for t in round_robin} == {0, 1, 2}
    assert {frozenset((t.first, t.second)) for t in round_robin} == {
        frozenset(("random", STRONG)),
        frozenset(("random", "greedy")),
        frozenset((STRONG, "greedy")),
    }
    assert {t.pairing for t in gauntlet} == {0, 1}
    assert all("random" in (t.first, t.second) for t in gauntlet)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"games_per_pairing": 3}, "even"),
        ({"bots": ("random",)}, "at least 2 bots"),
        ({"bots": ("random", "nonsense")}, "unknown bot"),
        ({"format": "knockout"}, "unknown format"),
        ({"game": "chess"}, "chess"),
        ({"rounds": 1}, "rounds are for a Swiss tournament, not a round-robin"),
        ({"format": "swiss", "rounds": 1}, "2 games per pairing, not 4"),
        ({"format": "swiss", "games_per_pairing": 2}, "at least 1 round, not None"),
        ({"format": "swiss", "games_per_pairing": 2, "rounds": 0}, "at least 1 round, not 0"),
        ({"format": "swiss", "games_per_pairing": 2, "rounds": 2}, "at most 1 round, not 2"),
        ({"format": "swiss", "games_per_pairing": 2, "rounds": 1}, "no schedule ahead"),
    ],
)
def test_bad_specs_are_refused_with_a_reason(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(TournamentError, match=message):
        schedule(ttt_spec(**changes), TTT_OPENINGS)


# -- one game ------------------------------------------------------------------------------------


class _Crasher:
    """Stands in for a Bot whose search raises."""

    engine_name = None

    def choose(self, state: State[Any], *, time_budget: float | None = None) -> SearchResult:
        raise RuntimeError("out of cheese")


class _Passer:
    """Stands in for a Bot that returns no move."""

    engine_name = None

    def choose(self, state: State[Any], *, time_budget: float | None = None) -> SearchResult:
        return SearchResult(move=None, score=0.0)


class _Cheater:
    """Stands in for a Bot that plays on an occupied square."""

    engine_name = None

    def choose(self, state: State[Any], *, time_budget: float | None = None) -> SearchResult:
        return SearchResult(move=state.game.initial_state().parse_move("5"), score=0.0)


def factory_with_crasher(spec: str, game: Game) -> Bot:
    """Module level (so it pickles): "random:seed=99" crashes, any other spec is real."""
    if spec == "random:seed=99":
        return _Crasher()  # type: ignore[return-value]
    return create_bot(spec, game)


def _task(first: str, second: str, opening: Opening | None = None) -> GameTask:
    return GameTask(0, 0, first, second, opening or Opening("start", "tictactoe"))


def test_strong_bot_beats_random_and_the_record_has_its_statistics() -> None:
    record = play_game(_task(STRONG, "random"), ply_cap=100)
    assert record.result == 1.0
    assert record.reason
    assert record.code.is_rules
    first, second = record.stats
    assert first.moves + second.moves == len(record.moves)
    assert first.nodes > first.moves  # a depth-4 search visits more than one node per move
    assert first.mean_depth == 4


def test_a_crashing_bot_loses_with_the_reason() -> None:
    record = play_game(_task(STRONG, "random:seed=99"), 100, bot_factory=factory_with_crasher)
    assert record.result == 1.0
    assert record.reason == "crash: RuntimeError: out of cheese"
    assert record.code is ResultCode.BOT_FAILURE
    record = play_game(_task("random:seed=99", STRONG), 100, bot_factory=factory_with_crasher)
    assert (record.result, record.code) == (0.0, ResultCode.BOT_FAILURE)


@pytest.mark.parametrize(
    ("bot", "reason", "code"),
    [(_Passer(), "no move", ResultCode.BOT_FAILURE), (_Cheater(), "illegal", ResultCode.FORFEIT)],
)
def test_no_move_or_an_illegal_move_loses(bot: object, reason: str, code: ResultCode) -> None:
    opening = Opening("e", "tictactoe", moves=("5",))  # square 5 taken: the cheater plays it

    def factory(spec: str, game: Game) -> Bot:
        return bot if spec == "x" else create_bot(spec, game)  # type: ignore[return-value]

    record = play_game(_task("random", "x", opening), 100, bot_factory=factory)
    assert record.result == 1.0
    assert reason in record.reason
    assert record.code is code
    assert record.moves[0] == "5"


def test_a_slow_move_loses_on_time() -> None:
    ticks = iter(range(0, 10_000, 5))  # a fake clock: every reading is 5 s after the last

    def clock() -> float:
        return float(next(ticks))

    record = play_game(_task(STRONG, "random"), 100, move_time=1.0, clock=clock)
    assert record.result == 0.0
    assert "limit" in record.reason
    assert record.code is ResultCode.TIMEOUT
    assert len(record.moves) == 0


def test_ply_cap_draws() -> None:
    record = play_game(_task("random", "random:seed=1"), ply_cap=3)
    assert (record.result, record.reason, len(record.moves)) == (0.5, "ply cap", 3)
    assert record.code is ResultCode.PLY_CAP


@pytest.mark.parametrize("cap", [2, 3])
def test_an_opening_as_long_as_the_ply_cap_is_played_in_full_and_drawn(cap: int) -> None:
    opening = Opening("three", "tictactoe", moves=("4", "0", "8"))
    record = play_game(_task("random", "random:seed=1", opening), ply_cap=cap)
    assert (record.result, record.code, record.moves) == (0.5, ResultCode.PLY_CAP, opening.moves)
    assert record.stats[0].moves == record.stats[1].moves == 0


# -- whole tournaments ---------------------------------------------------------------------------


def test_concurrent_tournament_strong_bot_scores_more_and_crashes_do_not_stop_it() -> None:
    spec = ttt_spec(bots=("random", STRONG, "random:seed=99"))
    records = run_tournament(spec, TTT_OPENINGS, concurrency=2, bot_factory=factory_with_crasher)
    assert [r.index for r in records] == list(range(12))
    points = {
        bot: sum(r.score_of(bot) for r in records if bot in (r.first, r.second))
        for bot in spec.bots
    }
    assert points[STRONG] > points["random"]
    crashed = [r for r in records if "random:seed=99" in (r.first, r.second)]
    assert len(crashed) == 8
    assert all(r.reason.startswith("crash: RuntimeError") for r in crashed)
    assert all(r.code is ResultCode.BOT_FAILURE for r in crashed)
    assert all(r.score_of("random:seed=99") == 0 for r in crashed)


class _StopError(Exception):
    pass


def outcomes(records: list[GameRecord]) -> list[tuple[Any, ...]]:
    """Everything a deterministic replay repeats (times differ from run to run)."""
    return [
        (
            r.index,
            r.pair,
            r.first,
            r.second,
            r.opening,
            r.moves,
            r.result,
            r.reason,
            r.code,
            [(s.moves, s.nodes, s.depth_sum) for s in r.stats],
        )
        for r in records
    ]


def _counting_play(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    played: list[int] = []
    real = runner_module.play_game

    def counting(task: GameTask, *args: Any, **kwargs: Any) -> GameRecord:
        played.append(task.index)
        return real(task, *args, **kwargs)

    monkeypatch.setattr(runner_module, "play_game", counting)
    return played


def test_an_interrupted_run_resumes_without_replaying(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = ttt_spec(bots=("random", STRONG, "greedy"))
    journal = tmp_path / "run.jsonl"
    uninterrupted = run_tournament(spec, TTT_OPENINGS, concurrency=1)

    played = _counting_play(monkeypatch)

    def stop_after_five(record: GameRecord, done: int, total: int) -> None:
        if done == 5:
            raise _StopError

    with pytest.raises(_StopError):
        run_tournament(spec, TTT_OPENINGS, 1, journal, progress=stop_after_five)
    assert played == [0, 1, 2, 3, 4]
    assert len(read_journal(journal)[1]) == 5

    played.clear()
    resumed = run_tournament(spec, TTT_OPENINGS, 1, journal)
    assert played == list(range(5, 12))
    assert outcomes(resumed) == outcomes(uninterrupted)
    assert sorted(g["index"] for g in read_journal(journal)[1]) == list(range(12))

    played.clear()
    assert outcomes(run_tournament(spec, TTT_OPENINGS, 1, journal)) == outcomes(uninterrupted)
    assert played == []


def test_a_truncated_last_line_is_dropped_and_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = ttt_spec()
    journal = tmp_path / "run.jsonl"
    complete = run_tournament(spec, TTT_OPENINGS, 1, journal)
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text("".join(lines[:-1]) + lines[-1][:25])  # killed while writing game 3
    assert len(read_journal(journal)[1]) == 3

    played = _counting_play(monkeypatch)
    assert outcomes(run_tournament(spec, TTT_OPENINGS, 1, journal)) == outcomes(complete)
    assert played == [3]
    assert len(read_journal(journal)[1]) == 4
    assert all(json.loads(line) for line in journal.read_text().splitlines())


def test_a_damaged_line_in_the_middle_is_an_error(tmp_path: Path) -> None:
    spec = ttt_spec()
    journal = tmp_path / "run.jsonl"
    run_tournament(spec, TTT_OPENINGS, 1, journal)
    lines = journal.read_text().splitlines(keepends=True)
    lines[2] = "{not json\n"
    journal.write_text("".join(lines))
    with pytest.raises(JournalError, match=":3: damaged"):
        run_tournament(spec, TTT_OPENINGS, 1, journal)


def test_a_journal_of_an_older_version_is_refused_with_what_to_do(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    run_tournament(ttt_spec(), TTT_OPENINGS, 1, journal)
    lines = journal.read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    assert header["version"] == 2
    old_games = [json.loads(line)["game"] for line in lines[1:]]
    assert all(game["code"] for game in old_games)
    # A version 1 journal: its games have no result code.
    for game in old_games:
        del game["code"]
    old = [{**header, "version": 1}] + [{"kind": "game", "game": game} for game in old_games]
    journal.write_text("".join(json.dumps(entry) + "\n" for entry in old))
    with pytest.raises(JournalError, match=r"version 1.*older Arena.*new journal"):
        run_tournament(ttt_spec(), TTT_OPENINGS, 1, journal)


def test_a_journal_of_another_tournament_is_refused(tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    run_tournament(ttt_spec(), TTT_OPENINGS, 1, journal)
    before = journal.read_bytes()
    with pytest.raises(JournalError, match=r"different tournament.*spec"):
        run_tournament(ttt_spec(seed=4), TTT_OPENINGS, 1, journal)
    with pytest.raises(JournalError, match="schedule"):
        run_tournament(ttt_spec(), TTT_OPENINGS[::-1], 1, journal)
    assert journal.read_bytes() == before


def test_records_round_trip_through_json() -> None:
    record = play_game(_task(STRONG, "random"), ply_cap=100)
    assert GameRecord.from_dict(json.loads(json.dumps(record.to_dict()))) == record
    spec = ttt_spec(move_time=0.5, options=())
    assert TournamentSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec
    # Only a Swiss spec writes its rounds: the journals of other formats read as before.
    assert "rounds" not in spec.to_dict()
    swiss = ttt_spec(format="swiss", games_per_pairing=2, rounds=1)
    assert swiss.to_dict()["rounds"] == 1
    assert TournamentSpec.from_dict(json.loads(json.dumps(swiss.to_dict()))) == swiss


# -- the command ---------------------------------------------------------------------------------


@pytest.fixture
def cli() -> Iterator[CliRunner]:
    yield CliRunner()


def test_cli_tournament_writes_json(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = cli.invoke(
        create_cli(),
        [
            "tournament",
            "--game",
            "tictactoe",
            "--bots",
            "random",
            STRONG,
            "--games",
            "2",
            "--concurrency",
            "2",
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert STRONG in result.stdout
    data = json.loads(out.read_text())
    assert data["spec"]["bots"] == ["random", STRONG]
    assert len(data["games"]) == 2
    assert data["standings"][0]["bot"] == STRONG
    assert sum(row["points"] for row in data["standings"]) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bots", "random", "nonsense"], "unknown bot"),
        (["--bots", "random", STRONG, "--games", "3"], "even"),
        (["--game", "chess", "--bots", "random", STRONG], "unknown game"),
        (["--bots", "random", STRONG, "--format", "knockout"], "unknown format"),
    ],
)
def test_cli_errors_exit_2_without_traceback(cli: CliRunner, args: list[str], message: str) -> None:
    full = ["tournament", *(["--game", "tictactoe"] if "--game" not in args else []), *args]
    result = cli.invoke(create_cli(), full)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output
