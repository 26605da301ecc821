"""API tokens: random, shown to their owner once, stored only as a hash."""

from __future__ import annotations

import hashlib
import hmac
import secrets

TOKEN_BYTES = 32


def new_token() -> tuple[str, str]:
    """Return (token, its hash). The token has 256 random bits.

    A fast hash (SHA-256) is enough: unlike passwords, such tokens cannot be guessed from a
    dictionary, so a slow password hash would only slow every request down.
    """
    token = "arena_" + secrets.token_urlsafe(TOKEN_BYTES)
    return token, hash_token(token)


def hash_token(token: str) -> str:
    """Return the stored form of `token` (hex SHA-256)."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def token_matches(token: str, stored_hash: str) -> bool:
    """Return True when `token` hashes to `stored_hash` (constant-time comparison)."""
    return hmac.compare_digest(hash_token(token), stored_hash)
