"""Settings by area: every ARENA_* name still sets its setting, flat names still construct and
copy, and docs/SETTINGS.md is what the code generates."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from server.settings import Settings, all_settings, setting_named, settings_markdown

ROOT = Path(__file__).resolve().parents[2]

NOT_SETTINGS = {
    "ARENA_SERVER": "the server `arena bot` and the course commands talk to",
    "ARENA_TOKEN": "the player token of those commands",
    "ARENA_BOT_DIR": "the house-bot container's token directory",
    "ARENA_BOT_NAME": "the house-bot container's player name",
    "ARENA_BOT_SPEC": "the house-bot container's bot",
    "ARENA_EGDB_DIR": "where the endgame database is kept",
    "ARENA_ENGINES": "the engines the benches and tests play against",
    "ARENA_CHROMIUM": "the browser of the page tests",
    "ARENA_SCREENSHOTS": "where the page tests save screenshots",
    "ARENA_TEST_DATABASE_URL": "the PostgreSQL of the tests",
    "ARENA_TEST_REDIS_URL": "the Redis of the tests",
}
"""ARENA_* variables the documentation names that are not the server's settings."""


def test_the_settings_page_is_generated_from_the_code() -> None:
    page = (ROOT / "docs" / "SETTINGS.md").read_text(encoding="utf-8")
    assert page == settings_markdown(), (
        "docs/SETTINGS.md is stale: run `python -m server.settings > docs/SETTINGS.md`"
    )


def test_every_variable_the_docs_name_exists() -> None:
    settings = {setting.variable for setting in all_settings()}
    texts = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    texts += sorted(path for path in (ROOT / "deploy").iterdir() if path.is_file())
    for path in texts:
        for name in re.findall(r"ARENA_[A-Z0-9_]*[A-Z0-9]", path.read_text(encoding="utf-8")):
            family = name + "_" in {f"ARENA_{group}_" for group in ("GRADER", "RATE")}
            assert name in settings or name in NOT_SETTINGS or family, f"{path.name}: {name}"


def test_each_group_setting_reads_its_flat_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_GRADER_WORKERS", "3")
    monkeypatch.setenv("arena_bot_max_depth", "7")  # the names are case-insensitive
    monkeypatch.setenv("ARENA_RATE_LIMITS_ENABLED", "false")
    monkeypatch.setenv("ARENA_PORT", "8123")
    settings = Settings()
    assert settings.grader.workers == 3
    assert settings.bot.max_depth == 7
    assert settings.rate.limits_enabled is False
    assert settings.port == 8123
    assert Settings(grader_workers=5).grader.workers == 5  # given beats the environment


def test_a_list_setting_of_a_group_is_json_in_its_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pools = [{"name": "ttt", "game": "tictactoe", "base_ms": 5000}]
    monkeypatch.setenv("ARENA_POOL_POOLS", json.dumps(pools))
    (pool,) = Settings().pool.pools
    assert (pool.name, pool.game, pool.base_ms, pool.increment_ms) == ("ttt", "tictactoe", 5000, 0)
    monkeypatch.setenv("ARENA_POOL_POOLS", "ttt")  # not JSON: refused by name
    with pytest.raises(ValidationError, match=r"pool\.pools"):
        Settings()
    monkeypatch.setenv("ARENA_POOL_POOLS", json.dumps([{**pools[0], "game": "chess"}]))
    with pytest.raises(ValidationError, match="no game is called 'chess'"):
        Settings()


def test_flat_names_construct_and_copy_with_checks() -> None:
    settings = Settings(grader_workers=2, ws_hello_timeout_s=1.5, redis_key_prefix="x")
    assert (settings.grader.workers, settings.ws.hello_timeout_s) == (2, 1.5)
    assert settings.redis.key_prefix == "x"
    copied = settings.model_copy(update={"rate_limits_enabled": False, "port": 9000})
    assert copied.rate.limits_enabled is False and copied.port == 9000
    assert copied.grader.workers == 2 and settings.rate.limits_enabled is True
    with pytest.raises(ValidationError, match="not a rate like"):
        settings.model_copy(update={"rate_ws_messages": "often"})
    with pytest.raises(ValidationError):
        Settings(grader_workers=0)


def test_every_setting_round_trips_through_its_flat_name() -> None:
    settings = Settings()
    flat = settings.flat()
    assert len(flat) == len(list(all_settings())) > 80
    assert Settings.model_validate(flat) == settings
    for name in flat:
        setting = setting_named(name)
        assert setting is not None and setting.variable == "ARENA_" + name.upper()


def test_a_setting_named_alone_wins_over_its_whole_group() -> None:
    base = Settings(grader_workers=2)
    merged = Settings(**{**base.model_dump(), "grader_workers": 4, "rate_limits_enabled": False})
    assert merged.grader.workers == 4 and merged.rate.limits_enabled is False
    replaced = base.model_copy(update={"grader": base.grader.model_copy(update={"workers": 6})})
    assert replaced.grader.workers == 6
