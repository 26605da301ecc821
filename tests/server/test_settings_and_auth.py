"""Settings come from ARENA_* variables; tokens are random and stored hashed."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from server.auth import hash_token, new_token, token_matches
from server.settings import Settings, get_settings


def test_defaults_need_no_setup(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ARENA_DATABASE_URL", "ARENA_PORT", "ARENA_MAX_ILLEGAL_MOVES"):
        monkeypatch.delenv(name, raising=False)
    settings = get_settings()
    assert settings.database_url.startswith("sqlite+aiosqlite:///")
    assert settings.max_illegal_moves == 3


def test_environment_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_DATABASE_URL", "postgresql+asyncpg://u@h/db")
    monkeypatch.setenv("ARENA_MAX_ILLEGAL_MOVES", "5")
    monkeypatch.setenv("ARENA_HOUSE_BOTS", '["random"]')
    settings = get_settings()
    assert settings.database_url == "postgresql+asyncpg://u@h/db"
    assert settings.max_illegal_moves == 5
    assert settings.house_bots == ["random"]


def test_bad_settings_are_rejected_clearly() -> None:
    with pytest.raises(ValidationError, match="max_illegal_moves"):
        Settings(max_illegal_moves=0)
    with pytest.raises(ValidationError, match="port"):
        Settings(port=70000)


def test_tokens_are_random_and_only_their_hash_is_kept() -> None:
    token, stored = new_token()
    other, other_stored = new_token()
    assert token != other and stored != other_stored
    assert token.startswith("arena_") and len(token) > 40
    assert stored == hash_token(token) and token not in stored
    assert token_matches(token, stored)
    assert not token_matches(other, stored)
