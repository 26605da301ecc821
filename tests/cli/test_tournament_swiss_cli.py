"""`arena tournament --format swiss`: rounds paired from the results so far, the table, resume."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import create_cli
from cli.tournament_swiss import BYE_POINTS, default_rounds, run_swiss
from competition.journal import read_journal
from competition.openings import default_openings
from competition.runner import GameRecord, TournamentSpec
from competition.schedule import most_swiss_rounds
from competition.swiss import BoardResult, Entrant, PlayedRound, SwissRules, pair_round
from competition.swiss_standings import swiss_standings
from tests.waiting import wait_for

# Fast, deterministic and unlike: seeded random movers, one-ply and shallow searches.
SEVEN = [
    "random",
    "random:seed=1",
    "random:seed=2",
    "greedy",
    "greedy:seed=1",
    "minimax:depth=2",
    "alphabeta:depth=1",
]
SIX = SEVEN[:6]


def swiss(tmp_path: Path, bots: list[str], *args: str, name: str = "out") -> dict[str, Any]:
    """Run `arena tournament --format swiss` on tic-tac-toe and return its JSON and output."""
    out = tmp_path / f"{name}.json"
    result = CliRunner().invoke(
        create_cli(),
        ["tournament", "--game", "tictactoe", "--format", "swiss", "--bots", *bots,
         "--json", str(out), *args],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(out.read_text())
    data["stdout"] = result.stdout
    return data


def played_rounds(pairings: list[dict[str, Any]]) -> list[PlayedRound]:
    """The JSON's rounds as competition.swiss reads them."""
    return [
        PlayedRound(
            tuple(
                BoardResult(b["first"], b["second"], b["first_points"], b["second_points"])
                for b in entry["boards"]
            ),
            entry["bye"],
        )
        for entry in pairings
    ]


def can_pair_afresh(bots: list[str], met: set[frozenset[str]], byes: list[str]) -> bool:
    """Whether a round could pair `bots` with no rematch, the bye (an odd field) going to one
    with the fewest byes (by brute force: the fields here are small)."""

    def pairable(left: list[str]) -> bool:
        if not left:
            return True
        one, rest = left[0], left[1:]
        return any(
            frozenset((one, other)) not in met and pairable([b for b in rest if b != other])
            for other in rest
        )

    if len(bots) % 2 == 0:
        return pairable(bots)
    fewest = min(byes.count(bot) for bot in bots)
    return any(pairable([b for b in bots if b != bye]) for bye in bots if byes.count(bye) == fewest)


def check_rules(data: dict[str, Any], bots: list[str], rounds: int, seed: int) -> None:
    """Every pairing rule on the played games, and each round as competition.swiss pairs it."""
    games = {game["index"]: game for game in data["games"]}
    pairings = data["swiss"]["pairings"]
    assert data["spec"]["format"] == "swiss" and data["spec"]["rounds"] == rounds
    assert [entry["round"] for entry in pairings] == list(range(1, rounds + 1))
    assert len(games) == rounds * (len(bots) // 2) * 2
    met: set[frozenset[str]] = set()
    byes: list[str] = []
    for entry in pairings:
        # Two bots meet again only when the round could not be paired otherwise.
        fresh = all(frozenset((b["first"], b["second"])) not in met for b in entry["boards"])
        assert fresh or not can_pair_afresh(bots, met, byes), f"a needless rematch: {entry}"
        seated = [bot for b in entry["boards"] for bot in (b["first"], b["second"])]
        # Every bot on one board, or the bye (an odd field only).
        assert sorted([*seated, *([entry["bye"]] if entry["bye"] else [])]) == sorted(bots)
        assert (entry["bye"] is not None) == (len(bots) % 2 == 1)
        if entry["bye"]:
            byes.append(entry["bye"])
        for board in entry["boards"]:
            one, two = (games[index] for index in board["games"])
            # A board is one opening played twice, colours swapped.
            assert (one["first"], one["second"]) == (board["first"], board["second"])
            assert (two["first"], two["second"]) == (board["second"], board["first"])
            assert one["opening"] == two["opening"] == entry["opening"]
            assert board["first_points"] == one["result"] + 1.0 - two["result"]
            assert board["first_points"] + board["second_points"] == 2.0
            met.add(frozenset((board["first"], board["second"])))
    # Nobody has a second bye before everyone has had one.
    assert len(set(byes)) == min(len(byes), len(bots))
    # Each round is competition.swiss's pairing of the results before it.
    entrants = [Entrant(bot) for bot in bots]
    rules = SwissRules(game_pairs=True, seed=seed)
    played = played_rounds(pairings)
    for number, entry in enumerate(pairings):
        paired = pair_round(entrants, played[:number], rules)
        boards = [(b["first"], b["second"]) for b in entry["boards"]]
        assert boards == [(p.first, p.second) for p in paired.pairings]
        assert entry["bye"] == paired.bye
    # The table: each bot's game points plus its byes, ranked as competition.swiss ranks them.
    table = data["swiss"]["table"]
    points = dict.fromkeys(bots, 0.0)
    for game in games.values():
        points[game["first"]] += game["result"]
        points[game["second"]] += 1.0 - game["result"]
    for row in table:
        assert row["score"] == points[row["bot"]] + BYE_POINTS * row["byes"]
        assert row["byes"] == byes.count(row["bot"])
        assert row["boards"] + row["byes"] == rounds
    assert sum(row["score"] for row in table) == len(games) + BYE_POINTS * len(byes)
    expected = swiss_standings(entrants, played, rules)
    assert [(r["rank"], r["bot"], r["score"], r["buchholz"]) for r in table] == [
        (s.rank, s.player, s.score, s.buchholz) for s in expected
    ]
    assert sum(row["points"] for row in data["standings"]) == len(games)


def test_an_odd_swiss_keeps_every_pairing_rule_and_writes_its_rounds(tmp_path: Path) -> None:
    folder, page = tmp_path / "games", tmp_path / "report.html"
    data = swiss(
        tmp_path, SEVEN, "--rounds", "5", "--seed", "4", "--records", str(folder),
        "--html", str(page),
    )  # fmt: skip
    check_rules(data, SEVEN, rounds=5, seed=4)
    # Five rounds of seven bots: five different byes, 2 points each.
    assert len({entry["bye"] for entry in data["swiss"]["pairings"]}) == 5
    assert data["swiss"]["bye_points"] == BYE_POINTS == 2.0
    lines = data["stdout"].splitlines()
    assert [line.split(" (")[0] for line in lines if line.startswith("round ")] == [
        f"round {n}/5" for n in range(1, 6)
    ]
    first = data["swiss"]["pairings"][0]
    board = first["boards"][0]
    assert f"{board['first']} {board['first_points']:g}-{board['second_points']:g}" in lines[0]
    assert lines[0].endswith(f"; bye {first['bye']}")
    assert "tictactoe swiss: 30 games" in data["stdout"]
    assert "Swiss table" in data["stdout"] and "Buchholz" in data["stdout"]
    # The page shows the Swiss table first, in its order.
    html = page.read_text()
    assert html.index("Swiss table") < html.index("<caption>Points")
    rows = [f'<td class="bot">{row["bot"]}</td><td>{row["score"]:g}</td>'
            for row in data["swiss"]["table"]]  # fmt: skip
    places = [html.index(row) for row in rows]
    assert places == sorted(places)
    # Each game's file says its round.
    rounds = {i: entry["round"] for entry in data["swiss"]["pairings"]
              for b in entry["boards"] for i in b["games"]}  # fmt: skip
    for path in sorted(folder.glob("game-*.json")):
        stored = json.loads(path.read_text())
        assert stored["round"] == rounds[stored["index"]]


@pytest.mark.parametrize(("seed", "pairs"), [(0, 13), (1, 15), (2, 15)])
def test_an_even_swiss_of_a_round_robins_rounds_keeps_the_rules(
    tmp_path: Path, seed: int, pairs: int
) -> None:
    # Six bots, five rounds: a late round may find that the pairs not played yet cannot pair
    # everyone (two triangles, say), and only then does a pair meet again: with seed 0 two
    # pairs do (13 of the 15 pairs meet), with seeds 1 and 2 every pair meets once.
    data = swiss(tmp_path, SIX, "--rounds", "5", "--seed", str(seed))
    check_rules(data, SIX, rounds=5, seed=seed)
    boards = [b for entry in data["swiss"]["pairings"] for b in entry["boards"]]
    assert len({frozenset((b["first"], b["second"])) for b in boards}) == pairs


def test_the_default_rounds_find_a_winner_and_workers_play_the_same_games(
    tmp_path: Path,
) -> None:
    one = swiss(tmp_path, SEVEN, name="one")
    check_rules(one, SEVEN, rounds=3, seed=0)  # ceil(log2(7))
    two = swiss(tmp_path, SEVEN, "--concurrency", "2", name="two")
    assert [_without_timing(g) for g in two["games"]] == [_without_timing(g) for g in one["games"]]
    assert two["swiss"] == one["swiss"]


def test_default_rounds() -> None:
    assert [default_rounds(n) for n in (2, 3, 4, 5, 8, 9, 16, 17, 1000)] == [
        1, 2, 2, 3, 3, 4, 4, 5, 10,
    ]  # fmt: skip
    assert [most_swiss_rounds(n) for n in (2, 3, 4, 5)] == [1, 2, 3, 4]
    assert all(1 <= default_rounds(n) <= most_swiss_rounds(n) for n in range(2, 200))


class KilledError(Exception):
    """Stands in for a kill in the middle of a round."""


@pytest.mark.parametrize("workers", [1, 2])
def test_a_resumed_swiss_pairs_its_played_rounds_again_and_plays_on(
    tmp_path: Path, workers: int
) -> None:
    whole = swiss(tmp_path, SEVEN, "--rounds", "4", "--seed", "2", name="whole")
    journal = tmp_path / "run.journal"
    spec = TournamentSpec(game="tictactoe", bots=tuple(SEVEN), format="swiss", seed=2, rounds=4)
    openings = default_openings("tictactoe", 4, 2)
    finished: list[GameRecord] = []

    def stop_in_round_three(record: GameRecord) -> None:
        finished.append(record)
        if len(finished) == 15:  # round three's third game (six a round)
            raise KilledError

    with pytest.raises(KilledError):
        run_swiss(spec, openings, workers, journal, game_over=stop_in_round_three)
    kept = {game["index"] for game in read_journal(journal)[1]}
    assert len(kept) == 15 and set(range(12)) <= kept  # two rounds and three games

    played: list[GameRecord] = []
    resumed = run_swiss(spec, openings, workers, journal, game_over=played.append)
    # Only the games missing are played, each once.
    assert sorted(record.index for record in played) == sorted(set(range(24)) - kept)
    # The rounds played before the interruption are paired again, the same boards, and the
    # tournament ends as one never interrupted.
    assert [_without_timing(r.to_dict()) for r in resumed.records] == [
        _without_timing(game) for game in whole["games"]
    ]
    # The command resumes the same journal: everything is there, nothing is played.
    again = swiss(tmp_path, SEVEN, "--rounds", "4", "--seed", "2", "--journal", str(journal),
                  name="again")  # fmt: skip
    assert again["swiss"] == whole["swiss"]
    assert [_without_timing(g) for g in again["games"]] == [
        _without_timing(g) for g in whole["games"]
    ]
    assert len(read_journal(journal)[1]) == 24


def test_a_swiss_killed_in_its_second_round_resumes_from_its_journal(tmp_path: Path) -> None:
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    bots = ["alphabeta:depth=5", "alphabeta:depth=4", "alphabeta:depth=3", "minimax:depth=3",
            "greedy"]  # fmt: skip

    def command(journal: Path, out: Path) -> list[str]:
        return [
            exe, "tournament", "--game", "connect4", "--format", "swiss", "--bots", *bots,
            "--seed", "3", "-j", "2", "--journal", str(journal), "--json", str(out),
        ]  # fmt: skip

    def games(journal: Path) -> list[dict[str, Any]]:
        if not journal.exists():
            return []
        lines = journal.read_text(encoding="utf-8").splitlines()[1:]
        return [json.loads(line)["game"] for line in lines if line.strip()]

    journal, out = tmp_path / "run.journal", tmp_path / "out.json"
    process = subprocess.Popen(
        command(journal, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:

        def played() -> int:
            assert process.poll() is None, "the tournament ended before it could be killed"
            return len(games(journal))

        # Round one's four games and one of round two's (tests.waiting: a liveness bound).
        wait_for("five games in the journal", played, lambda count: count >= 5, every_s=0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    finally:
        if process.poll() is None:
            process.kill()
    kept = {game["index"] for game in games(journal)}
    assert 5 <= len(kept) < 12 and not out.exists()

    resumed = subprocess.run(
        command(journal, out), capture_output=True, text=True, timeout=300, check=False
    )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    indexes = [game["index"] for game in games(journal)]
    assert sorted(indexes) == list(range(12))  # none lost, none played twice
    fresh_out = tmp_path / "fresh.json"
    fresh = subprocess.run(
        command(tmp_path / "fresh.journal", fresh_out),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    # The rounds are paired as in a run never killed, and the same games are played.
    resumed_data, fresh_data = json.loads(out.read_text()), json.loads(fresh_out.read_text())
    assert resumed_data["swiss"] == fresh_data["swiss"]
    assert [_without_timing(g) for g in resumed_data["games"]] == [
        _without_timing(g) for g in fresh_data["games"]
    ]
    check_rules(resumed_data, bots, rounds=3, seed=3)


def _without_timing(game: dict[str, Any]) -> dict[str, Any]:
    """A game's record without the seconds its moves took (all else is deterministic)."""
    stats = {side: {**totals, "seconds": 0.0} for side, totals in game["stats"].items()}
    return {**game, "stats": stats}


def test_a_journal_that_the_results_do_not_pair_is_refused(tmp_path: Path) -> None:
    journal = tmp_path / "run.journal"
    args = ["--rounds", "2", "--journal", str(journal)]
    swiss(tmp_path, SIX, *args)
    lines = journal.read_text().splitlines()
    entry = json.loads(lines[-1])
    game = entry["game"]
    game["first"], game["second"] = game["second"], game["first"]
    journal.write_text("\n".join([*lines[:-1], json.dumps(entry)]) + "\n")
    result = CliRunner().invoke(
        create_cli(),
        ["tournament", "--game", "tictactoe", "--format", "swiss", "--bots", *SIX, *args],
    )
    assert result.exit_code == 2
    assert "not written by this tournament" in result.stderr
    assert "Traceback" not in result.output
    # A round robin's journal is another tournament's.
    other = CliRunner().invoke(
        create_cli(),
        ["tournament", "--game", "tictactoe", "--bots", *SIX, "--journal", str(journal)],
    )
    assert other.exit_code == 2
    assert "different tournament" in other.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bots", "random", "greedy", "--rounds", "1"], "--rounds is for --format swiss"),
        (["--bots", "random", "greedy", "--format", "gauntlet", "--rounds", "1"],
         "--rounds is for --format swiss"),
        (["--bots", "random", "greedy", "--format", "swiss", "--games", "4"],
         "a Swiss board is one colour-swapped pair of games, not --games 4"),
        (["--bots", "random", "--format", "swiss"], "at least 2 bots, got 1"),
        (["--bots", "random", "greedy", "random:seed=1", "--format", "swiss", "--rounds", "3"],
         "at most 2 rounds, not 3"),
        (["--bots", "random", "greedy", "--format", "swiss", "--rounds", "2"],
         "at most 1 round, not 2"),
        (["--bots", "random", "greedy", "--format", "swiss", "--rounds", "0"],
         "at least 1 round, not 0"),
        (["--bots", "random", "greedy", "--format", "swiss", "--sprt", "elo0=0", "elo1=5"],
         "not a Swiss tournament"),
        (["--bots", "random", "nonsense", "--format", "swiss"], "unknown bot"),
    ],
)  # fmt: skip
def test_bad_swiss_settings_exit_2_in_one_line(args: list[str], message: str) -> None:
    result = CliRunner().invoke(create_cli(), ["tournament", "--game", "tictactoe", *args])
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_help_describes_the_swiss_format() -> None:
    result = CliRunner().invoke(create_cli(), ["tournament", "--help"], terminal_width=200)
    assert result.exit_code == 0
    assert "swiss" in result.stdout and "--rounds" in result.stdout
    assert "Buchholz" in result.stdout
