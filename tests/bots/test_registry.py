"""The bot registry: every bot declared once, and specs, limits and listings read from it."""

from __future__ import annotations

import re

import pytest

from bots.player import Player
from bots.registry import LOCAL_PLAYERS, PLAYERS
from bots.spec import BotSpecError, SearchLimits, check_limits, describe_bots, parse_bot_spec
from protocol import HouseBot

NAMES = list(PLAYERS)


def test_the_registry_keeps_every_existing_name_in_order() -> None:
    assert NAMES[:6] == ["random", "greedy", "minimax", "alphabeta", "id", "mcts"]


def every_subclass(cls: type[Player]) -> set[type[Player]]:
    return {sub for child in cls.__subclasses__() for sub in {child, *every_subclass(child)}}


def test_every_player_class_is_registered_once() -> None:
    """A class written but not registered, or two under one name, would be lost silently.

    A base class that names no bot of its own (the protocol engines') is not a bot.
    """
    in_registry = {
        cls
        for cls in every_subclass(Player)
        if cls.__module__ in ("bots.registry", "bots.engine.players", "bots.programs.players")
        and "name" in vars(cls)
    }
    assert set(PLAYERS.values()) | set(LOCAL_PLAYERS.values()) == in_registry
    assert len(PLAYERS) + len(LOCAL_PLAYERS) == len(in_registry)
    assert not set(PLAYERS) & set(LOCAL_PLAYERS)


@pytest.mark.parametrize("name", NAMES)
def test_every_bot_is_one_class_under_its_own_name(name: str) -> None:
    player = PLAYERS[name]
    assert issubclass(player, Player)
    assert player.name == name
    assert player.description and "\n" not in player.description


@pytest.mark.parametrize("name", NAMES)
def test_every_name_is_a_spec_the_wire_protocol_accepts(name: str) -> None:
    assert HouseBot.model_validate({"bot": name}).bot == name
    assert HouseBot.model_validate({"bot": f"{name}:seed=1"}).bot == f"{name}:seed=1"


@pytest.mark.parametrize("name", NAMES)
def test_the_defaults_are_the_registry_s_and_every_number_has_a_maximum(name: str) -> None:
    options = PLAYERS[name].options
    spec = parse_bot_spec(name)
    assert spec.options == {key: option.default for key, option in options.items()}
    assert str(spec) == name
    for key, option in options.items():
        if option.kind in ("int", "float"):
            assert option.maximum is not None, f"{name} option {key} has no maximum"
        assert all(other in options for other in option.unless)


def test_describe_bots_lists_the_registry() -> None:
    described = describe_bots()
    assert [name for name, _, _ in described] == NAMES
    for name, description, options in described:
        assert description == PLAYERS[name].description
        assert [key for key, _, _ in options] == list(PLAYERS[name].options)
        for key, default, _ in options:
            # A default of None is shown as no value (the help says what is used), not "None".
            assert default != "None"
            assert (default == "") == (PLAYERS[name].options[key].default is None)


TINY = SearchLimits(depth=2, simulations=10, seconds=1.0, nodes=100)


@pytest.mark.parametrize("name", NAMES)
def test_every_bot_is_bounded_by_a_host_s_limits(name: str) -> None:
    """Defaults beyond a tiny host's maxima are refused unless an option bounds nothing."""
    options = PLAYERS[name].options
    limited = [key for key, option in options.items() if option.limit is not None]
    if not limited:
        check_limits(parse_bot_spec(name), TINY)
        return
    for key in limited:
        option = options[key]
        assert option.limit is not None
        too_many = getattr(TINY, option.limit) + 1
        values = {other: 0 for other in option.unless}
        values[key] = too_many
        text = name + ":" + ",".join(f"{k}={v}" for k, v in values.items())
        with pytest.raises(BotSpecError, match=re.escape(f"{name} option {key} is")):
            check_limits(parse_bot_spec(text), TINY)
