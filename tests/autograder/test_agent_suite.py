"""Agent suites: categories certified by the rules, generation from a seed, and the file format."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from autograder.agent_suite import (
    CATEGORIES,
    CROWNING,
    CROWNING_ENDS_JUMP,
    FORCED_CAPTURE,
    KING_BACKWARDS,
    LEGAL_SUITE,
    MULTI_JUMP,
    AgentSuite,
    AgentSuiteError,
    Opponent,
    describe_agent_suite,
    position_categories,
)
from autograder.agent_suite_file import load_agent_suite, save_agent_suite
from autograder.agent_suite_maker import make_agent_suite
from games.checkers import WHITE, Checkers, parse_board, square_row

REPO = Path(__file__).resolve().parents[2]
PUBLIC_SUITE = REPO / "autograder" / "examples" / "agent-suite.json"
GAME = Checkers()
HAND_MADE = {name: parse_board(GAME, board, player) for name, board, player in LEGAL_SUITE}


@pytest.fixture(scope="module")
def generated() -> AgentSuite:
    return make_agent_suite(5, public=False)


# ---- categories ----


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("opening, red to move", set()),
        ("forced capture, red", {FORCED_CAPTURE}),
        ("double jump, red", {FORCED_CAPTURE, MULTI_JUMP}),
        ("crowning ends the jump, red", {FORCED_CAPTURE, CROWNING, CROWNING_ENDS_JUMP}),
        ("king jumps backwards, red", {FORCED_CAPTURE, KING_BACKWARDS}),
        ("triple jump, black", {MULTI_JUMP, CROWNING}),  # no other move: not "forced"
        ("crowning step, black", {CROWNING}),
        ("two kings, black", {KING_BACKWARDS}),
    ],
)
def test_categories_of_the_hand_made_positions(name: str, expected: set[str]) -> None:
    assert position_categories(HAND_MADE[name]) == expected


def test_a_capture_without_any_possible_step_is_not_a_forced_capture() -> None:
    # Red's only man has both forward squares taken by black men: it can only jump.
    rows = ["........"] * 8
    rows[4], rows[5] = ".b.b....", "..r....."
    state = parse_board(GAME, "\n".join(rows), "red")
    assert all(m.is_capture for m in state.legal_moves())
    assert FORCED_CAPTURE not in position_categories(state)


def test_a_crowning_capture_with_nothing_more_to_jump_does_not_end_a_jump() -> None:
    rows = ["........"] * 8
    rows[1], rows[2], rows[6] = "..b.....", ".r......", ".....b.."
    state = parse_board(GAME, "\n".join(rows), "red")
    assert position_categories(state) == {FORCED_CAPTURE, CROWNING}


# ---- generation ----


def test_generated_suite_covers_every_category_with_both_colours(generated: AgentSuite) -> None:
    assert len(generated.legal_positions) == 10
    covered = set()
    for _, board, player in generated.legal_positions:
        state = parse_board(GAME, board, player)
        moves = state.legal_moves()
        assert moves, "every position has a legal move"
        categories = position_categories(state)
        covered |= {(category, player) for category in categories}
        # The certificates, restated with the rules directly.
        if MULTI_JUMP in categories:
            assert any(len(m.path) >= 3 for m in moves)
        if FORCED_CAPTURE in categories:
            assert all(m.is_capture for m in moves)
        crown_row = 0 if state.turn == WHITE else 7
        if CROWNING in categories:
            assert any(
                state.piece_at(m.path[0]).islower() and square_row(m.path[-1]) == crown_row
                for m in moves
            )
        if KING_BACKWARDS in categories:
            assert any(state.piece_at(m.path[0]).isupper() for m in moves)
    assert covered == {(c, p) for c in CATEGORIES for p in ("red", "black")}
    assert len({board for _, board, _ in generated.legal_positions}) == 10
    assert "every category with both colours" in describe_agent_suite(generated)


def test_generation_is_reproducible_and_seeds_differ(generated: AgentSuite) -> None:
    assert make_agent_suite(5, public=False) == generated
    other = make_agent_suite(6, public=False)
    assert other.legal_positions != generated.legal_positions
    assert other.exact_seed != generated.exact_seed
    assert other.game_seed != generated.game_seed
    default = AgentSuite()
    assert generated.exact_seed != default.exact_seed
    assert generated.game_seed != default.game_seed
    assert generated.opponents == default.opponents and not generated.public


def test_too_few_positions_cannot_cover_the_categories() -> None:
    with pytest.raises(AgentSuiteError, match="cannot cover every category"):
        make_agent_suite(5, count=1)


def test_examples_are_other_certified_positions_and_change_nothing_else(
    generated: AgentSuite,
) -> None:
    suite = make_agent_suite(5, examples=4, public=False)
    assert replace(suite, example_positions=()) == generated
    assert len(suite.example_positions) == 4
    graded = {(board, player) for _, board, player in suite.legal_positions}
    for number, (name, board, player) in enumerate(suite.example_positions, 1):
        assert (board, player) not in graded
        categories = position_categories(parse_board(GAME, board, player))
        listed = ", ".join(c for c in CATEGORIES if c in categories) or "no special rule"
        assert name == f"example {number} ({listed})"
    # Each category in turn: the first example must capture, the second has a multi-jump.
    first, second = (parse_board(GAME, b, p) for _, b, p in suite.example_positions[:2])
    assert FORCED_CAPTURE in position_categories(first)
    assert MULTI_JUMP in position_categories(second)
    assert "4 public examples" in describe_agent_suite(suite)
    assert "example" not in describe_agent_suite(generated)


def test_more_positions_than_the_games_hold_cannot_be_drawn() -> None:
    with pytest.raises(AgentSuiteError, match="fewer than the 100010 asked for"):
        make_agent_suite(5, examples=100_000)


def test_base_sets_the_other_fields() -> None:
    base = AgentSuite(opponents=(Opponent("random", 2, 0.5),), time_limit=1.0)
    suite = make_agent_suite(5, count=8, base=base, public=True)
    assert suite.opponents == base.opponents and suite.time_limit == 1.0
    assert len(suite.legal_positions) == 8 and suite.public


# ---- the file format ----


def test_save_then_load_round_trips_and_private_files_are_owner_only(
    generated: AgentSuite, tmp_path: Path
) -> None:
    private = tmp_path / "private.json"
    save_agent_suite(private, generated)
    assert load_agent_suite(private) == generated
    assert private.stat().st_mode & 0o777 == 0o600
    public = tmp_path / "public.json"
    changed = replace(generated, public=True, exact_depths=(2,), time_limit=1.5)
    save_agent_suite(public, changed)
    assert load_agent_suite(public) == changed
    assert public.stat().st_mode & 0o777 == 0o644


def test_examples_round_trip_and_a_file_without_them_loads_with_none(tmp_path: Path) -> None:
    suite = make_agent_suite(7, count=6, examples=2, public=False)
    suite = replace(suite, example_points=2.5)
    path = tmp_path / "examples.json"
    save_agent_suite(path, suite)
    saved = json.loads(path.read_text())
    assert [e["name"] for e in saved["example_positions"]] == [
        name for name, _, _ in suite.example_positions
    ]
    assert load_agent_suite(path) == suite
    # The shipped example predates examples: it has no such field, and loads with none.
    assert "example_positions" not in _valid() and "example_points" not in _valid()
    shipped = load_agent_suite(PUBLIC_SUITE)
    assert shipped.example_positions == () and shipped.example_points == AgentSuite().example_points
    save_agent_suite(path, shipped)
    assert json.loads(path.read_text())["example_positions"] == []
    assert load_agent_suite(path) == shipped


def test_saving_an_existing_public_file_as_private_makes_it_owner_only(
    generated: AgentSuite, tmp_path: Path
) -> None:
    path = tmp_path / "suite.json"
    save_agent_suite(path, replace(generated, public=True))
    save_agent_suite(path, generated)
    assert path.stat().st_mode & 0o777 == 0o600


def test_the_default_suite_saves_its_hand_made_positions(tmp_path: Path) -> None:
    path = tmp_path / "default.json"
    save_agent_suite(path, AgentSuite())
    assert load_agent_suite(path) == AgentSuite(legal_positions=LEGAL_SUITE)


def test_the_public_example_is_the_documented_command_output() -> None:
    shipped = load_agent_suite(PUBLIC_SUITE)
    assert shipped == make_agent_suite(1, public=True)
    assert shipped.public


def _file(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "suite.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def _valid() -> dict[str, Any]:
    return json.loads(PUBLIC_SUITE.read_text())


def _edited(**changes: Any) -> dict[str, Any]:
    data = _valid()
    data.update(changes)
    return data


def _position(**changes: Any) -> dict[str, Any]:
    position = dict(_valid()["legal_positions"][0])
    position.update(changes)
    return _edited(legal_positions=[position])


def _example(**changes: Any) -> dict[str, Any]:
    example = dict(_valid()["legal_positions"][1])
    example.update(changes)
    return _edited(example_positions=[example])


def _without(key: str) -> dict[str, Any]:
    data = _valid()
    del data[key]
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("not json", "is not a JSON agent suite"),
        ({"format": "arena-endgame-puzzles"}, "is not an agent suite"),
        (_edited(version=2), "unsupported suite version 2"),
        (_without("game_seed"), "missing game_seed"),
        (_edited(colour="red"), r"unknown field\(s\) colour"),
        (_edited(public="yes"), '"public" must be true or false'),
        (_edited(exact_seed=1.5), '"exact_seed" must be an integer'),
        (_edited(legal_depth=0), '"legal_depth" must be an integer >= 1'),
        (_edited(time_limit=-1), '"time_limit" must be a number >= 0.001'),
        (_edited(exact_depths=[1, 0]), '"exact_depths" must be a list of integers >= 1'),
        (_edited(legal_positions=[]), '"legal_positions" must be a non-empty list'),
        (_position(player="white"), 'position 1: "player" must be "red" or "black"'),
        (_position(board=["rrrrrrrr"]), "position 1: the board is not a course board"),
        (_position(board=["........"] * 8), "position 1: black has no legal move"),
        (_edited(example_positions={}), '"example_positions" must be a list'),
        (_edited(example_points=-1), '"example_points" must be a number >= 0'),
        (_example(player="white"), 'example 1: "player" must be "red" or "black"'),
        (_example(name=" "), 'example 1: "name" must be a non-empty string'),
        (_example(board=["rrrrrrrr"]), "example 1: the board is not a course board"),
        (
            _edited(example_positions=_valid()["legal_positions"][2:3]),
            "example 1 is position 3 of legal_positions: a public example must not give",
        ),
        (
            _edited(opponents=[{"spec": "nobot", "games": 2, "threshold": 0.5, "points": 10}]),
            "opponent 1: unknown bot",
        ),
        (
            _edited(opponents=[{"spec": "cmd:./bot", "games": 2, "threshold": 0.5, "points": 1}]),
            "opponent 1: cmd runs a program from this machine's disk",
        ),
        (
            _edited(opponents=[{"spec": "random", "games": 2, "threshold": 2, "points": 10}]),
            'opponent 1: "threshold" must be a number from 0 to 1',
        ),
    ],
)
def test_bad_files_are_rejected_naming_the_file_and_the_problem(
    tmp_path: Path, data: Any, message: str
) -> None:
    path = _file(tmp_path, data)
    with pytest.raises(AgentSuiteError, match=message) as caught:
        load_agent_suite(path)
    assert str(path) in str(caught.value)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(AgentSuiteError, match=r"cannot read the agent suite .*nothing\.json"):
        load_agent_suite(tmp_path / "nothing.json")


def test_optional_fields_take_their_defaults(tmp_path: Path) -> None:
    data = {key: _valid()[key] for key in ("format", "version", "public", "legal_positions")}
    data.update(exact_seed=3, game_seed=4)
    suite = load_agent_suite(_file(tmp_path, data))
    assert suite == replace(
        AgentSuite(), legal_positions=suite.legal_positions, exact_seed=3, game_seed=4
    )
