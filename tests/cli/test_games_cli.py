"""The `arena games`, `arena show` and `arena perft` commands."""

from __future__ import annotations

import io
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from cli.games import PERFT_MAX_SECONDS, _count, _log_growth, plan_perft
from cli.main import create_cli
from games import get_game

runner = CliRunner()
app = create_cli()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_perft_json_has_the_documented_keys() -> None:
    code, out, _ = run("perft", "checkers", "5", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["game"] == "checkers"
    assert data["depth"] == 5
    assert data["nodes"] == 7361
    assert data["seconds"] >= 0
    assert set(data) == {"game", "depth", "nodes", "seconds", "position"}


def test_perft_divide_sums_to_the_total() -> None:
    code, out, _ = run("perft", "checkers", "4", "--divide", "--json")
    assert code == 0
    data = json.loads(out)
    assert sum(data["divide"].values()) == data["nodes"] == 1469
    assert set(data["divide"]) == {"9-13", "9-14", "10-14", "10-15", "11-15", "11-16", "12-16"}


def test_perft_text_and_position() -> None:
    code, out, _ = run("perft", "checkers", "3", "--position", "B:WK1,18,21,27,28,29,31:B3,4,11")
    assert code == 0
    assert "perft(3) = 155 nodes" in out


def test_perft_depth_zero_counts_the_root() -> None:
    code, out, _ = run("perft", "tictactoe", "0", "--json")
    assert code == 0 and json.loads(out)["nodes"] == 1


def test_perft_says_one_node_and_groups_digits() -> None:
    code, out, _ = run("perft", "tictactoe", "0")
    assert code == 0 and out.startswith("perft(0) = 1 node in ")
    code, out, _ = run("perft", "checkers", "8")
    assert code == 0 and out.startswith("perft(8) = 845,931 nodes in ")


def test_perft_refuses_at_once_a_count_that_would_never_end() -> None:
    # Before, this ran for hours without a word.
    code, out, err = run("perft", "checkers", "99999999999")
    assert code == 2 and out == ""
    # The refusal is the last thing said (on a machine's first long count, a line saying that
    # the compiled core is being built comes before it).
    line = " ".join(err[err.index("error: ") :].split())
    assert line.startswith("error: perft(99,999,999,999) of checkers would count about 10^")
    assert "(--max-time 600 refuses longer counts; --max-time 0 runs any)" in line
    # A count that ends because the games do is counted, however deep.
    code, out, _ = run("perft", "tictactoe", "99999999999", "--json")
    assert code == 0 and json.loads(out)["nodes"] == 0


def test_perft_estimates_from_the_shallow_depths_on_its_clock() -> None:
    # The test's clock: each count of the probe looks like 0.3 s, more than its budget.
    ticks = iter(range(1000))
    plan = plan_perft(get_game("checkers").initial_state(), 12, clock=lambda: next(ticks) * 0.3)
    assert plan.exact is None and plan.probed == 2
    assert plan.growth == 7.0  # 7 moves, then 49 replies: 7 times as many, as from 1 to 7
    assert round(plan.log10_nodes, 6) == round(12 * math.log10(7), 6)
    assert plan.seconds() > PERFT_MAX_SECONDS  # refused at the default limit
    assert plan.depth_within(0.3 * 7) == 3
    # A growth that shrinks ply by ply (games ending) stops growing the estimate: tic-tac-toe
    # at 7 plies grows 2.7 times, having grown 3.6 times before.
    assert _log_growth(148_176 / 54_720, (148_176 / 54_720) / (54_720 / 15_120), 10**11) < 1
    assert _log_growth(2.0, 0.5, 1000) == 0.0
    # Counts that fit the probe (on a clock that never moves) are exact, and so is every count
    # past the games' end.
    assert plan_perft(get_game("checkers").initial_state(), 4, clock=lambda: 0.0).exact == 1469
    assert plan_perft(get_game("tictactoe").initial_state(), 12, clock=lambda: 0.0).exact == 0


def test_a_long_perft_shows_its_progress_on_a_terminal() -> None:
    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, color_system=None, width=200)
    per_move = _count(get_game("checkers").initial_state(), 5, True, console=terminal)
    assert sum(n for _, n in per_move) == 7361
    shown = screen.getvalue()
    assert "perft(5)" in shown and "49/49 subtrees, 7,361 nodes" in shown


def test_game_options_reach_the_rules() -> None:
    code, out, _ = run("perft", "nim", "1", "--option", "heaps=2,3", "--json")
    assert code == 0 and json.loads(out)["nodes"] == 5
    code, out, _ = run("show", "nim", "-o", "heaps=0,0", "-o", "misere=false")
    assert code == 0 and "game over" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("perft", "chess", "2"), "unknown game 'chess'"),
        (("perft", "checkers", "2", "--position", "B:W21:B33"), "off the board"),
        (("show", "nim", "--option", "colour=red"), "no option colour"),
        (("show", "nim", "--option", "misere"), "KEY=VALUE"),
        (("show", "connect4", "--position", "4444444"), "column 4"),
        (("perft", "checkers", "-1"), "the depth must be 0 or more plies, not -1"),
    ],
)
def test_bad_input_is_one_clear_line(args: tuple[str, ...], message: str) -> None:
    code, out, err = run(*args)
    assert code == 2
    assert message in err
    assert "Traceback" not in out + err


def test_show_lists_moves_in_natural_order() -> None:
    code, out, _ = run("show", "checkers")
    assert code == 0
    assert "9-13 9-14 10-14 10-15 11-15 11-16 12-16" in out
    assert "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12" in out


def test_show_counts_one_legal_move_in_the_singular() -> None:
    code, out, _ = run("show", "checkers", "--position", "W:W18:B14,23")
    assert code == 0
    assert "White to move; 1 legal move:" in out
    code, out, _ = run("show", "tictactoe")
    assert "X to move; 9 legal moves:" in out


def test_show_reports_the_end() -> None:
    code, out, _ = run("show", "checkers", "--position", "W:W29:B25,22")
    assert code == 0
    assert "black wins (White has no legal move)" in out


def test_games_lists_every_game() -> None:
    code, out, _ = run("games")
    assert code == 0
    for name in ("checkers", "connect4", "nim", "tictactoe"):
        assert name in out


def test_installed_console_script() -> None:
    exe = shutil.which("arena", path=str(Path(sys.executable).parent))
    if exe is None:
        pytest.skip("the arena console script is not installed in this environment")
    done = subprocess.run(
        [exe, "perft", "connect4", "4", "--json"], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout)["nodes"] == 2401


IMPORTS_PROBE = """
import sys
from cli.main import main
sys.argv = ["arena", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
core = any(name in sys.modules for name in ("bots.core.checkers", "bots.core.connect4"))
print("imported:", "numba" in sys.modules, core, file=sys.stderr)
"""


@pytest.mark.parametrize(
    ("args", "compiled"),
    [
        (["--help"], False),
        (["games"], False),
        (["show", "checkers"], False),
        (["perft", "tictactoe", "3"], False),
        (["perft", "checkers", "3"], False),
        (["perft", "checkers", "10"], True),
        (["perft", "checkers", "10", "--divide", "--json"], True),
        (["perft", "connect4", "5"], False),
        (["perft", "connect4", "9", "--divide", "--json"], True),
        (["solve", "connect4", "--position", "4455"], True),
    ],
)
def test_only_a_long_count_or_a_solve_imports_the_compiler(args: list[str], compiled: bool) -> None:
    """Commands that do not search start without numba; a checkers or Connect Four count
    longer than the probe of the shallow depths counts with the compiled core, and so does
    a Connect Four solve."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS_PROBE, *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    assert done.stderr.splitlines()[-1] == f"imported: {compiled} {compiled}"
    if "--divide" in args:  # the compiled core's counts below each move add up
        result = json.loads(done.stdout)
        expected = {"checkers": 18_391_564, "connect4": 39_394_572}[args[1]]
        assert result["nodes"] == sum(result["divide"].values()) == expected
