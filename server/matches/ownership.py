"""Who may play a match, as the store needs to know it: claims, and the refusal of one.

In a cluster each unfinished match is played by one process, its owner (server.cluster.leases
keeps the leases in PostgreSQL). The store (server.matches.store) claims a match before it
holds it, through an `Ownership` it is given; it never imports the cluster. A single process
has no ownership at all: it holds every match.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


class NotOwnerError(Exception):
    """Another live process owns the match: the call must go to it (`owner_id`)."""

    def __init__(self, match_id: str, owner_id: str) -> None:
        super().__init__(f"match {match_id} is owned by the live process {owner_id}")
        self.match_id = match_id
        self.owner_id = owner_id


@dataclass(frozen=True)
class Claim:
    """A successful claim: the owner epoch to write under, and the time to charge the side to
    move (milliseconds; see server.cluster.leases's clock rule). `previous` is who owned it
    before."""

    epoch: int
    downtime_ms: int
    previous: str | None


class Ownership(Protocol):
    """Claims matches for this process (`process_id`), in a cluster."""

    @property
    def process_id(self) -> str:
        """The id of this process, the owner of the matches it claims or creates."""

    async def claim(self, match_id: str) -> Claim | None:
        """Claim the unfinished match for this process; return the claim, or None for no such
        match or one that is over. Raises NotOwnerError when another live process owns it."""
