"""The order in which waiting grading jobs are graded: fair between addresses, then between the
players of an address; fresh uploads first.

A deadline brings every student at once, and one uploader with many jobs (a student
resubmitting, a stranger with free tokens, a course's regrade of every submission) must not
make everyone else wait behind all of them; nor may one client address with several tokens.
So the queue takes client addresses in turn, and within an address its players in turn.

The order is a sort, the same in one process (`FairQueue`) and in the shared queue
(server.grading.shared, whose engine takes the highest priority first):

- **Tier**: fresh uploads before background work (regrades), which waits for a moment when no
  upload does.
- **Rank**: a job's place among its address's jobs of its tier (`address_ranks`), counted over
  the address's waiting *and running* jobs: each player's jobs in their order, the players in
  turn (a player's first job, then every player's second, ...), a running job before a
  waiting one of the same turn. So an address being served (a job of it running) ranks its
  next job 1, while an address with nothing running or waiting ranks its first job 0 and
  goes before it. The ranks of an address's jobs are counted again whenever the address
  queues a job; taking or finishing a job changes no rank.
- **Arrival**: between equal ranks, the job queued first.

`FairQueue` is pure bookkeeping (no I/O, no clock); server.grading.workers feeds it and waits on
it, and tells it when a job it took is done.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Entry:
    """One of an address's jobs of one tier, as `address_ranks` counts it.

    `owner` is the uploading player (None: anonymous, one lane for all), `running` whether a
    worker grades it now, `arrival` any sortable key of the order the jobs were queued in.
    """

    job_id: str
    owner: Hashable
    running: bool
    arrival: Any


def address_ranks(entries: Iterable[Entry]) -> dict[str, int]:
    """Return the rank of each waiting entry among its address's jobs (see the module).

    `entries` are every waiting and running job of one address and tier. A player's jobs
    take turns 0, 1, 2, ... in their order, its running ones first; the address's jobs are
    ordered by turn (a running job first within a turn, then by arrival), and a waiting job's
    rank is its place in that order from 0.
    """
    by_owner: dict[Hashable, list[Entry]] = defaultdict(list)
    for entry in entries:
        by_owner[entry.owner].append(entry)
    keyed: list[tuple[tuple[int, bool, Any], Entry]] = []
    for jobs in by_owner.values():
        jobs.sort(key=lambda entry: (not entry.running, entry.arrival))
        keyed.extend(
            ((turn, not entry.running, entry.arrival), entry) for turn, entry in enumerate(jobs)
        )
    keyed.sort(key=lambda item: item[0])
    return {entry.job_id: rank for rank, (_, entry) in enumerate(keyed) if not entry.running}


@dataclass(frozen=True)
class Place:
    """Where a waiting job stands: its place from 1 (1: taken next) and whose jobs are taken
    before it: `own` the same player's (anonymous jobs are nobody's own), `address` other
    uploaders' from its address, `others` everyone else's."""

    position: int
    own: int
    address: int
    others: int

    @property
    def ahead(self) -> int:
        """Return how many jobs are taken before this one."""
        return self.position - 1


@dataclass
class _Job:
    job_id: str
    owner: Hashable
    address: Hashable
    background: bool
    arrival: int
    exempt: bool
    rank: int = 0

    def key(self) -> tuple[bool, int, int]:
        return (self.background, self.rank, self.arrival)


class FairQueue:
    """Waiting jobs in the module's order, and the jobs taken from it that still run."""

    def __init__(self) -> None:
        self._waiting: dict[str, _Job] = {}
        self._running: dict[str, _Job] = {}
        self._arrivals = itertools.count()

    def push(
        self,
        job_id: str,
        owner: Hashable,
        address: Hashable = None,
        *,
        background: bool = False,
        exempt: bool = False,
    ) -> None:
        """Add a job of player `owner` (any hashable; None for anonymous uploads) uploaded
        from `address` (None: unknown, one lane); `exempt` jobs (course submissions) do not
        count toward their address's waiting jobs (`waiting_from`).

        A job already waiting is left where it is.
        """
        if job_id in self._waiting:
            return
        self._running.pop(job_id, None)  # graded again (a regrade of a running job)
        self._waiting[job_id] = _Job(
            job_id, owner, address, background, next(self._arrivals), exempt
        )
        self._rank(address, background)

    def _rank(self, address: Hashable, background: bool) -> None:
        """Count the ranks of the address's waiting jobs of a tier again."""
        mine = [
            job
            for job in itertools.chain(self._running.values(), self._waiting.values())
            if job.address == address and job.background == background
        ]
        ranks = address_ranks(
            Entry(job.job_id, job.owner, job.job_id in self._running, job.arrival) for job in mine
        )
        for job_id, rank in ranks.items():
            self._waiting[job_id].rank = rank

    def pop(self) -> str | None:
        """Remove and return the job to grade next (it runs until `done`); None when nothing
        waits."""
        if not self._waiting:
            return None
        job = min(self._waiting.values(), key=_Job.key)
        del self._waiting[job.job_id]
        self._running[job.job_id] = job
        return job.job_id

    def done(self, job_id: str) -> None:
        """Forget a job taken by `pop` once its grading has ended."""
        self._running.pop(job_id, None)

    def remove(self, job_id: str) -> bool:
        """Take a waiting job out of the queue; return whether it was waiting."""
        return self._waiting.pop(job_id, None) is not None

    def _order(self) -> list[_Job]:
        return sorted(self._waiting.values(), key=_Job.key)

    def position(self, job_id: str) -> int | None:
        """Return the job's place in the queue from 1, as things stand; None if not waiting.

        A background job's place counts every fresh job before it (fresh uploads that arrive
        later move it back).
        """
        place = self.place(job_id)
        return None if place is None else place.position

    def place(self, job_id: str) -> Place | None:
        """Return where the job stands and whose jobs are before it; None if not waiting."""
        return self.places([job_id]).get(job_id)

    def places(self, job_ids: Iterable[str]) -> dict[str, Place]:
        """Return where each of the waiting `job_ids` stands (those not waiting are left out)."""
        wanted = {job_id for job_id in job_ids if job_id in self._waiting}
        if not wanted:
            return {}
        found = {}
        before: list[_Job] = []
        for job in self._order():
            if job.job_id in wanted:
                found[job.job_id] = _place(job, before)
                if len(found) == len(wanted):
                    break
            before.append(job)
        return found

    def waiting_of(self, owner: Hashable) -> int:
        """Return how many jobs of player `owner` wait, in both tiers."""
        return sum(1 for job in self._waiting.values() if job.owner == owner)

    def waiting_from(self, address: Hashable) -> int:
        """Return how many fresh jobs from `address` wait, `exempt` ones not counted."""
        return sum(
            1
            for job in self._waiting.values()
            if job.address == address and not job.background and not job.exempt
        )

    def __len__(self) -> int:
        return len(self._waiting)

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._waiting


def _place(job: _Job, before: list[_Job]) -> Place:
    """Return the place of `job`, taken after the jobs `before`."""
    own = address = 0
    for other in before:
        if job.owner is not None and other.owner == job.owner:
            own += 1
        elif other.address == job.address:
            address += 1
    return Place(len(before) + 1, own, address, len(before) - own - address)
