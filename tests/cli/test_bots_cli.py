"""The `arena analyse`, `arena solve` and `arena bots` commands."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli.bots import _SearchWatch
from cli.main import create_cli

runner = CliRunner()
app = create_cli()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_analyse_json_has_the_documented_keys() -> None:
    code, out, _ = run("analyse", "checkers", "--bot", "alphabeta:depth=4", "--json")
    assert code == 0
    data = json.loads(out)
    assert {"move", "score", "pv", "nodes", "depth", "seconds", "nps"} <= set(data)
    assert data["depth"] == 4
    assert data["pv"][0] == data["move"]
    assert data["move"] in {"9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16"}
    assert data["nodes"] > 0


def test_analyse_finds_the_immediate_win() -> None:
    code, out, _ = run(
        "analyse", "connect4", "--position", "445566", "--bot", "alphabeta:depth=2", "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["move"] in {"3", "7"}
    assert data["score"] > 900_000


def test_analyse_stops_a_search_that_would_not_end_and_says_so() -> None:
    # Before, this ran silently for hours: a fixed-depth search has no move until it ends.
    code, out, err = run("analyse", "checkers", "--bot", "minimax:depth=128", "--time", "0.5")
    assert code == 2 and out == ""
    line = " ".join(err.split())
    assert line.startswith("error: minimax:depth=128 did not finish within 0.5 s (--time), after")
    assert "ask a smaller depth, a longer --time (0: no limit)" in line
    # A bot that stops on time plays its best move so far.
    code, out, _ = run("analyse", "checkers", "--bot", "id:time=0", "--time", "0.5", "--json")
    assert code == 0 and json.loads(out)["move"] is not None


def test_a_running_search_is_shown_and_stopped_on_its_clock() -> None:
    now = [0.0]
    watch = _SearchWatch("minimax:depth=128", lambda: now[0], 60)
    for _ in range(10):
        assert not watch.should_stop()
    now[0] = 12.4
    shown = watch.__rich__().text
    expected = "searching with minimax:depth=128: 12 s of 60 s (--time), 640 nodes or more"
    assert str(shown) == expected
    now[0] = 60.0
    assert watch.should_stop()


def test_analyse_text_output() -> None:
    code, out, _ = run("analyse", "tictactoe", "--bot", "mcts:simulations=200")
    assert code == 0
    assert "move" in out and "simulations" in out


def test_analyse_names_the_spec_as_given_and_a_proof_in_words() -> None:
    """A proven result is said in words, never as the raw 1e+06 of the search's scale."""
    code, out, _ = run(
        "analyse", "connect4", "--position", "4455", "--bot", "mcts:simulations=2000"
    )
    assert code == 0
    assert out.startswith("mcts:simulations=2000 on connect4")
    assert "score  a proven win (for the side to move)" in out
    assert "1e+06" not in out
    code, out, _ = run("analyse", "tictactoe", "--position", "XX.OO....", "--bot", "minimax")
    assert "score  a forced win in 1 ply (for the side to move)" in out
    code, out, _ = run("analyse", "tictactoe", "--position", "XX.OO....", "--bot", "id", "--json")
    data = json.loads(out)
    assert (data["outcome"], data["plies"]) == ("win", 1)
    code, out, _ = run("analyse", "checkers", "--bot", "alphabeta:depth=2", "--json")
    data = json.loads(out)
    assert (data["outcome"], data["plies"]) == (None, None)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("analyse", "checkers", "--bot", "alphabeta:depth=3,,"), "has an empty option"),
        (("analyse", "checkers", "--bot", "alphabeat"), "unknown bot 'alphabeat'"),
        (("analyse", "checkers", "--bot", "alphabeta:eval=nope"), "no evaluation 'nope'"),
        (("analyse", "checkers", "--position", "W:W29:B25,22", "--bot", "random"), "game is over"),
        # A huge number is refused at once, never searched (the CLI has the bots' own maxima).
        (
            ("analyse", "checkers", "--bot", "alphabeta:depth=" + "9" * 100),
            "depth is a number of 100 characters; at most 128 is allowed",
        ),
        (("analyse", "checkers", "--bot", "minimax:depth=1000"), "depth must be at most 128"),
    ],
)
def test_analyse_errors(args: tuple[str, ...], message: str) -> None:
    code, out, err = run(*args)
    assert code == 2
    assert message in err
    assert "Traceback" not in out + err


def test_solve_connect4_uses_the_pons_score() -> None:
    code, out, _ = run("solve", "connect4", "--position", "4455", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["score"] == 18
    assert data["value"] == "win"
    code, out, _ = run("solve", "connect4", "--position", "44455554221", "--json")
    assert json.loads(out)["score"] == -15


def test_solve_tictactoe_lists_every_optimal_move() -> None:
    code, out, _ = run("solve", "tictactoe", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["value"] == "draw" and data["score"] == 0
    assert data["best_moves"] == [str(i) for i in range(9)]
    assert {"value", "score", "best_moves", "nodes", "seconds"} <= set(data)


def test_solve_checkers_endgame() -> None:
    code, out, _ = run("solve", "checkers", "--position", "W:WK23,K28:B3", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["value"] == "win" and data["plies"] == 7


def test_solve_checkers_names_sides_and_moves_as_pdn_and_as_the_course_does() -> None:
    """The grader speaks red and (row,col), arena solve White and squares 1-32: both show."""
    code, out, _ = run("solve", "checkers", "--position", "W:WK23,K28:B3")
    assert code == 0
    text = " ".join(out.split())
    assert "win for white (to move; red in the course's words)" in text
    assert "23-18 [(5,4)-(4,3)], 23-19 [(5,4)-(4,5)]" in text
    assert "(row,col), row 0 at the top; red is White" in text
    code, out, _ = run("solve", "checkers", "--position", "W:WK23,K28:B3", "--json")
    data = json.loads(out)
    assert data["best_moves"][:2] == ["23-18", "23-19"]
    assert data["best_moves_course"][:2] == ["(5,4)-(4,3)", "(5,4)-(4,5)"]
    code, out, _ = run("solve", "tictactoe")
    assert "[" not in out and "course" not in out


def test_solve_nim_normal_play() -> None:
    code, out, _ = run("solve", "nim", "-o", "heaps=1,2", "-o", "misere=false", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["value"] == "win"
    assert data["best_moves"] == ["2:1"]


def test_bots_lists_every_bot_of_the_registry() -> None:
    from bots.registry import PLAYERS

    code, out, _ = run("bots")
    assert code == 0
    names = [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│")]
    assert [name for name in names if name] == list(PLAYERS)
    assert "alphabeta_lecture" in PLAYERS and "negamax" in PLAYERS


@pytest.mark.parametrize(
    "spec", ["minimax:depth=4", "alphabeta_lecture:depth=4", "negamax:depth=4"]
)
def test_analyse_runs_the_lecture_searches(spec: str) -> None:
    code, out, _ = run("analyse", "connect4", "--position", "445566", "--bot", spec, "--json")
    assert code == 0
    data = json.loads(out)
    assert data["move"] in {"3", "7"}
    assert data["score"] > 900_000 and data["depth"] == 4


SOLVE_KEYS = {"value", "score", "best_moves", "plies", "nodes", "seconds"}
LIMIT_KEYS = {"lower", "upper", "limit", "depth", "method"}


def test_solve_json_keeps_its_keys_and_adds_the_bounds() -> None:
    code, out, _ = run("solve", "connect4", "--position", "4455", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == SOLVE_KEYS | LIMIT_KEYS
    assert (data["lower"], data["upper"], data["limit"], data["method"]) == (
        18,
        18,
        None,
        "connect4",
    )


def test_solve_checkers_from_the_start_is_refused_at_once_saying_why() -> None:
    code, out, err = run("solve", "checkers")
    assert code == 2
    assert out == ""
    assert "24 pieces" in err and "endgames" in err and "--position" in err


def test_solve_connect4_with_a_time_limit_returns_and_says_why() -> None:
    code, out, err = run("solve", "connect4", "--time", "1", "--json")
    assert code == 1
    data = json.loads(out)
    assert (data["value"], data["limit"]) == ("unknown", "time")
    assert data["lower"] <= 1 <= data["upper"]  # the empty board scores +1 (oracles/search.md)
    assert "stopped after 1 s (time limit)" in err and "raise --time" in err
    assert "from fewer than 8 stones a solve can take minutes to hours" in err


def test_solve_node_limit_prints_the_interval_in_words() -> None:
    code, out, _ = run("solve", "connect4", "--position", "146411712567", "--nodes", "60000")
    assert code == 1
    assert "stopped after 60,000 nodes (node limit): score between" in out
    assert "raise --nodes" in out
    assert "fewer than" not in out  # 12 stones: raising the limit is worth it
    code, out, _ = run(
        "solve", "connect4", "--position", "146411712567", "--nodes", "60000", "--json"
    )
    data = json.loads(out)
    assert (data["limit"], data["nodes"]) == ("nodes", 60000)
    assert data["lower"] <= -3 <= data["upper"]  # its exact score, from a full solve


def test_solve_checkers_max_plies_without_a_proof_exits_1() -> None:
    code, out, _ = run("solve", "checkers", "--position", "W:WK23,K28:B3", "--max-plies", "5")
    assert code == 1
    assert "no forced win or loss within 5 plies" in out and "--max-plies" in out


def test_solve_large_nim_by_theory() -> None:
    code, out, _ = run("solve", "nim", "-o", "heaps=100,200,300", "--json")
    assert code == 0
    data = json.loads(out)
    assert (data["value"], data["method"], data["plies"]) == ("win", "nim-sum", None)
    assert data["best_moves"] == ["3:128"]  # heap 3 down to 100 ^ 200 = 172: nim-sum 0
    code, out, _ = run("solve", "nim", "-o", "heaps=100,200,300")
    assert "nim-sum theory" in out and "every winning move" in out


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        # One of a thing is said in the singular.
        (("analyse", "tictactoe", "--bot", "random"), "depth 1, 1 node, 0 evaluations"),
        (("solve", "connect4", "--nodes", "1"), "stopped after 1 node (node limit)"),
        (("solve", "connect4", "--nodes", "1"), "1 node in "),
        (
            ("solve", "checkers", "--position", "W:WK23,K28:B3", "--max-plies", "1"),
            "no forced win or loss within 1 ply (the --max-plies limit)",
        ),
        # Large numbers are written out with their digits grouped, never as 1e+09.
        (
            ("analyse", "connect4", "--bot", "mcts:simulations=2000000000"),
            "mcts option simulations must be at most 1,000,000,000, not 2000000000",
        ),
        (
            ("analyse", "connect4", "--bot", "mcts:time=100000000"),
            "mcts option time must be at most 86,400, not 100000000.0",
        ),
        (
            ("trace", "tictactoe", "--bot", "alphabeta:depth=1", "--window", "-1e13,5"),
            "--window bounds must be inf or within ±1,000,000,000,000, not -1e13",
        ),
    ],
)
def test_counts_are_said_as_people_say_them(args: tuple[str, ...], shown: str) -> None:
    result = runner.invoke(app, list(args))
    assert shown in " ".join(result.output.split()), result.output
