"""Where a call on a match runs in a cluster: here, or at the process that owns the match.

In a cluster (several processes on one PostgreSQL database; docs/SCALING.md) each unfinished
match is held by one process, its owner, which alone plays it (its lock, referee, house bots,
clock ticker, listeners). `MatchRouter` wraps the match service from outside: installed as
its `route`, it takes every call on a match (server.matches.commands) and sends it

- here (`MatchService.execute`), when the match is held here, or has no owner, a dead one or
  this process (loading it claims it: server.cluster.leases), or is over (read from the
  database, held by nobody);
- to the owner, when another live process owns it: over `remote` (server.cluster.forwarding),
  answered with the owner's result or refusal. When the owner does not answer, the call looks
  again (a dead owner's lease expires, then this process claims the match) until
  `lease_ttl_ms` and a margin have passed, then answers UNAVAILABLE (retryable). A call
  refused by the fence (another process claimed the match meanwhile) is sent again the same
  way: nothing of it was stored.

A `Read` (an arbitrary reader) is never forwarded: a non-owner reads a copy rebuilt from the
database (`MatchService.read_copy`: its clocks as they stand now), committing nothing.
Takeover of a dead owner's matches (server.cluster.processes) charges the side to move up to
the dead owner's last heartbeat, not for the ownerless time after it (server.cluster.leases);
a plain restart of a single process charges nobody (server.matches.lifecycle).

A call another process forwarded here is run by `serve`: here or refused, never forwarded
again.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Protocol, TypeVar

from protocol.errors import ErrorCode
from server.cluster.leases import Leases
from server.errors import MatchError
from server.matches.commands import MatchCall, Read
from server.matches.ownership import NotOwnerError
from server.matches.service import MatchService
from server.matches.store import RETRY_AFTER_MS, FencedMatchError

T = TypeVar("T")

FORWARD_MARGIN_S = 2.0
"""How long past `lease_ttl_ms` a call keeps looking for a match's owner before UNAVAILABLE."""

RETRY_PAUSE_S = 0.25
"""The pause before looking again for the owner of a match whose owner did not answer."""

OWNERS_CACHED = 10_000
"""Matches whose owner is remembered (the cache starts over when full)."""


class UnansweredError(Exception):
    """A call on a match got no answer from the process that plays it (`owner_id`): another
    process did not answer the forwarded call in time or could not be reached (it may be dead,
    its lease about to expire), or this process is stopping and runs no more calls."""

    def __init__(self, owner_id: str, why: str) -> None:
        super().__init__(f"process {owner_id} did not answer: {why}")
        self.owner_id = owner_id


class Remote(Protocol):
    """Sends calls on a match to the process that owns it (server.cluster.forwarding)."""

    async def call(self, owner_id: str, call: MatchCall[T], call_id: str) -> T:
        """Run `call` at `owner_id` and return its result; `call_id` is the same for every
        attempt of one call (an owner runs it once).

        Raises the owner's MatchError, NotOwnerError when it does not own the match (any
        more), UnansweredError when it does not answer in time.
        """


class MatchRouter:
    """Runs each call on a match where it is played: here or at its owner (see the module).

    `leases` are this process's; `lease_ttl_ms` is how long a lease lasts. `remote` reaches
    the other processes (None: none can be reached, and a match owned elsewhere is
    UNAVAILABLE).
    """

    def __init__(
        self,
        service: MatchService,
        leases: Leases,
        lease_ttl_ms: int,
        remote: Remote | None = None,
    ) -> None:
        self._service = service
        self._leases = leases
        self._ttl_s = lease_ttl_ms / 1000
        self.remote = remote
        """Sends calls to the owners of matches held elsewhere."""
        self._owners: dict[str, tuple[str, float]] = {}

    async def __call__(self, call: MatchCall[T]) -> T:
        """Run `call` here when this process holds the match or may claim it, else at the
        match's owner (a `Read`: on a copy from the database)."""
        if isinstance(call, Read):
            return await self._read(call)
        return await self._run(call, here_only=False)

    async def serve(self, call: MatchCall[T]) -> T:
        """Run a call another process sent here as the match's owner. Never forwarded again:
        raises NotOwnerError when another live process owns the match, and the call's
        MatchError when refused.

        Once this process is stopping, raises UnansweredError: the call is not run (or, caught
        by the closed writer, stored nothing), and the asking process tries again until this
        one has released its matches (server.cluster.processes), then claims the match."""
        if self._service.closing:
            raise UnansweredError(self._leases.process_id, "stopping")
        try:
            return await self._run(call, here_only=True)
        except MatchError as error:
            if self._service.closing and error.code is ErrorCode.INTERNAL_ERROR:
                raise UnansweredError(self._leases.process_id, "stopping") from None
            raise

    async def _read(self, call: Read[T]) -> T:
        service = self._service
        if service.store.in_memory(call.match_id) is not None:
            return await service.execute(call)
        if await self._owner(call.match_id) is None:
            try:
                return await service.execute(call)
            except NotOwnerError:
                pass  # another process claimed it meanwhile
        return await service.read_copy(call.match_id, call.reader)

    async def _run(self, call: MatchCall[T], *, here_only: bool) -> T:
        """Run `call` here when this process holds the match or may claim it, else send it to
        the match's owner (`here_only`: refuse with NotOwnerError instead)."""
        match_id = call.match_id
        deadline = time.monotonic() + self._ttl_s + FORWARD_MARGIN_S
        # One id for every attempt: an owner that ran the call already answers it again
        # rather than running it twice (its answer may have been lost).
        call_id = uuid.uuid4().hex
        bounced = False
        while True:
            owner = None
            if self._service.store.in_memory(match_id) is None:
                # Serving a forwarded call, the lease is read afresh: the asker trusts this
                # process's answer, and a remembered owner may be out of date.
                owner = await self._owner(match_id, fresh=here_only)
            if owner is None:
                try:
                    return await self._service.execute(call)
                except NotOwnerError as error:
                    owner = error.owner_id  # another process claimed it meanwhile
                except FencedMatchError:
                    self._owners.pop(match_id, None)
                    if time.monotonic() > deadline:
                        raise
                    continue  # nothing was stored: look for the new owner
            if here_only:
                raise NotOwnerError(match_id, owner)
            if len(self._owners) >= OWNERS_CACHED:
                self._owners.clear()
            self._owners[match_id] = (owner, time.monotonic() + self._ttl_s)
            try:
                if self.remote is None:
                    raise UnansweredError(owner, "this process has no bus to reach it")
                return await self.remote.call(owner, call, call_id)
            except (NotOwnerError, UnansweredError) as error:
                # The owner let the match go (look again at once, then pausing: the lease may
                # be changing hands), or did not answer (it may be dead: its lease expires).
                self._owners.pop(match_id, None)
                if time.monotonic() > deadline:
                    raise MatchError(
                        ErrorCode.UNAVAILABLE,
                        f"the server process playing this match does not answer ({error}); "
                        "another takes it over within seconds: retry",
                        match_id=match_id,
                        details={"retry_after_ms": RETRY_AFTER_MS},
                    ) from None
                if bounced or isinstance(error, UnansweredError):
                    await asyncio.sleep(RETRY_PAUSE_S)
                bounced = isinstance(error, NotOwnerError)

    async def _owner(self, match_id: str, *, fresh: bool = False) -> str | None:
        """Return the live process other than this one that owns the match, or None when it
        may be run here (no owner, a dead one, this process, a match over or none).

        The owner of a match last forwarded to is remembered for a lease (`fresh`: not used).
        """
        cached = None if fresh else self._owners.get(match_id)
        if cached is not None and cached[1] > time.monotonic():
            return cached[0]
        lease = await self._leases.lease(match_id)
        if lease is None or lease.is_over or not lease.alive or lease.owner_id is None:
            return None
        return None if lease.owner_id == self._leases.process_id else lease.owner_id
