"""Rated pools: hosted bots that join a pool are paired continuously and play rated matches
(docs/PROTOCOL.md, "Rated pools").

`PoolService` (service) is built in the lifespan and kept on `app.state.pools`; its loop pairs
each pool's waiting bots every `ARENA_POOL_PAIR_EVERY_S` by competition.matchmaking's rule and
creates ordinary matches between them, which the ratings rate as they end. `store` holds the
members and the games the pool made.
"""

from server.pool.service import PoolService

__all__ = ["PoolService"]
