"""The order in which waiting grading jobs are graded: fair between uploaders, fresh first.

A deadline brings every student at once, and one uploader with many jobs (a student
resubmitting, a stranger with a free token, a course's regrade of every submission) must not
make everyone else wait behind all of them. So the queue keeps one lane per uploader and takes
jobs from the lanes in turn (round robin, a lane joining at the end of the turn), each lane
first in, first out. Two tiers: fresh uploads are always taken before background work
(regrades), which waits for a moment when no upload does.

`FairQueue` is pure bookkeeping (no I/O, no clock); server.grading.workers feeds it and waits on
it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass, field


@dataclass
class _Tier:
    """The lanes of one tier: each uploader's jobs in order, and the lanes' turn order."""

    lanes: dict[Hashable, deque[str]] = field(default_factory=dict)
    turn: deque[Hashable] = field(default_factory=deque)
    """The owners with waiting jobs, the next to be served first."""

    def push(self, job_id: str, owner: Hashable) -> None:
        lane = self.lanes.get(owner)
        if lane is None:
            lane = self.lanes[owner] = deque()
            self.turn.append(owner)
        lane.append(job_id)

    def pop(self) -> str | None:
        if not self.turn:
            return None
        owner = self.turn.popleft()
        lane = self.lanes[owner]
        job_id = lane.popleft()
        if lane:
            self.turn.append(owner)
        else:
            del self.lanes[owner]
        return job_id

    def __len__(self) -> int:
        return sum(len(lane) for lane in self.lanes.values())

    def ahead(self, job_id: str, owner: Hashable) -> int | None:
        """Return how many of this tier's jobs are taken before `job_id`; None if not here."""
        lane = self.lanes.get(owner)
        if lane is None or job_id not in lane:
            return None
        rank = lane.index(job_id)
        # Every lane gives one job a turn: before our job's turn come `rank` full turns (each
        # lane's first `rank` jobs, as far as it has them), then the lanes served before ours
        # in the turn that takes it.
        count = sum(min(len(other), rank) for other in self.lanes.values())
        for other_owner in self.turn:
            if other_owner == owner:
                break
            if len(self.lanes[other_owner]) > rank:
                count += 1
        return count

    def remove(self, job_id: str, owner: Hashable) -> bool:
        lane = self.lanes.get(owner)
        if lane is None or job_id not in lane:
            return False
        lane.remove(job_id)
        if not lane:
            del self.lanes[owner]
            self.turn.remove(owner)
        return True


class FairQueue:
    """Waiting jobs, taken fresh before background and round robin between owners."""

    def __init__(self) -> None:
        self._fresh = _Tier()
        self._background = _Tier()
        self._where: dict[str, tuple[Hashable, bool]] = {}
        """Each waiting job's owner and whether it is background work."""

    def push(self, job_id: str, owner: Hashable, *, background: bool = False) -> None:
        """Add a job of `owner` (any hashable: a player id, None for anonymous uploads).

        A job already waiting is left where it is.
        """
        if job_id in self._where:
            return
        self._where[job_id] = (owner, background)
        (self._background if background else self._fresh).push(job_id, owner)

    def pop(self) -> str | None:
        """Remove and return the job to grade next; None when nothing waits."""
        job_id = self._fresh.pop()
        if job_id is None:
            job_id = self._background.pop()
        if job_id is not None:
            del self._where[job_id]
        return job_id

    def remove(self, job_id: str) -> bool:
        """Take a waiting job out of the queue; return whether it was waiting."""
        where = self._where.pop(job_id, None)
        if where is None:
            return False
        owner, background = where
        return (self._background if background else self._fresh).remove(job_id, owner)

    def position(self, job_id: str) -> int | None:
        """Return the job's place in the queue from 1, as things stand; None if not waiting.

        A background job's place counts every fresh job before it (fresh uploads that arrive
        later move it back).
        """
        where = self._where.get(job_id)
        if where is None:
            return None
        owner, background = where
        if background:
            ahead = self._background.ahead(job_id, owner)
            return None if ahead is None else len(self._fresh) + ahead + 1
        ahead = self._fresh.ahead(job_id, owner)
        return None if ahead is None else ahead + 1

    def waiting_of(self, owner: Hashable) -> int:
        """Return how many jobs of `owner` wait, in both tiers."""
        return sum(len(tier.lanes.get(owner, ())) for tier in (self._fresh, self._background))

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._where
