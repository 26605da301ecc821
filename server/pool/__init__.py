"""Rated pools: hosted bots and connected bots that join a pool are paired continuously and
play rated matches (docs/PROTOCOL.md, "Rated pools").

`PoolService` (service) is built in the lifespan and kept on `app.state.pools`; its loop pairs
each pool's waiting members every `ARENA_POOL_PAIR_EVERY_S` by competition.matchmaking's rule
and creates ordinary matches between them, which the ratings rate as they end; in a cluster,
the process holding POOL_LEADER_LOCK pairs. `store` holds the members, the games the pool made
and the bookings that keep a member to one pool game at once.
"""

from server.pool.service import LEADER_LOCK as POOL_LEADER_LOCK
from server.pool.service import PoolService

__all__ = ["POOL_LEADER_LOCK", "PoolService"]
