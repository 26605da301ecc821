"""The tournament service: who may create, start, cancel, answer and read tournaments.

`TournamentService` decides the policies (the server's maxima, the invitations and the owner's
rights: server.tournaments.invitations); the planning is server.tournaments.planning's, the
storage server.tournaments.store's and the playing server.tournaments.runner's.

Memory: the service holds a tournament while its runner runs here, while someone watches it
here, and while a request uses it (server.tournaments.held). A waiting tournament holds no
schedule either: it is planned at creation to be checked and counted, and again when it starts.

On workers (`ARENA_ROLE=server`, a `GameQueue` given): a tournament between house bots only is
not played here, unless it is an SPRT (its test decides which games are played at all). Starting
it stores it `running` and defers one job per game to the queue; `arena worker` processes play
them (server.jobs.tournament_games), each records its game once and the last one finishes the
tournament (TournamentStore.record_game), and each publishes a notice that every server process
hands to `on_notice` (server.tournaments.sync: notices lost or twice, the tournaments read back
every `tournament_follow_s`). The tournament's `concurrency` is ignored there: the workers' own
concurrency bounds the games in play. A game is shown once it has its result (it has no live
match to watch while played). A tournament with a registered player among its participants is
played by a server process's runner (its games are live matches: the players connect to play
them); its games and end are published on the bus too, so watchers on other processes follow it.

In a cluster (`owners` given, server.tournaments.owners) such a tournament has one owner, the
only process that runs its runner: the process that starts it claims it, and `reap` (run by
the cluster's reaper every heartbeat, server.cluster.processes) claims and resumes each
running one whose owner is dead (or none: released by a clean stop), within the matches'
takeover bound (`lease_ttl_ms` + `heartbeat_ms`). The runner's writes are fenced by the epoch
of its claim; a runner here whose tournament another process claimed meanwhile (this process
was taken for dead) is stopped at the next round, or at its next write. Its matches may be
owned by other processes after a takeover: their ends reach the runner over the bus
(`on_remote_match`), or by reading their state every `tournament_follow_s`. A tournament
cancelled on another process than its owner's stops there too (the end's notice). The other
processes show the tournament from the notices and from the database (every
`tournament_follow_s`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import (
    TournamentCreate,
    TournamentList,
    TournamentState,
)
from server.cluster.leases import share
from server.db.models import Player
from server.matches.publisher import Broadcast
from server.matches.service import MatchService
from server.tournaments.held import HeldTournaments, runs_here
from server.tournaments.invitations import check_accepted, check_invited, check_owner, invited
from server.tournaments.notices import Notify, ended_notice
from server.tournaments.owners import TournamentOwners
from server.tournaments.planning import check_maxima, current_round, plan
from server.tournaments.planning import games_total as planned_total
from server.tournaments.played import is_for_workers
from server.tournaments.runner import TournamentRunner
from server.tournaments.store import TournamentStore
from server.tournaments.sync import TournamentSync
from server.tournaments.tournament import HostedTournament, Watcher

log = logging.getLogger(__name__)


class GameQueue(Protocol):
    """Where the games of a tournament between house bots go to be played by workers."""

    async def defer(self, tournament_id: str, indexes: Sequence[int]) -> None:
        """Queue a job per game index (a game queued already is not queued twice)."""


class TournamentService:
    """Hosts tournaments: creates, starts, runs, resumes and reports them; one per application.

    Register `on_broadcast` as a `MatchService` listener before `resume()`. With `games`, the
    tournaments between house bots are played by workers (see the module); hand this
    process's bus notices to `on_notice`. `notify` publishes a notice to every server process
    (None: this process is the only one).
    """

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        matches: MatchService,
        *,
        wall: Callable[[], float] = time.time,
        games: GameQueue | None = None,
        notify: Notify | None = None,
        owners: TournamentOwners | None = None,
    ) -> None:
        self._matches = matches
        self._wall = wall
        self._store = TournamentStore(sessions)
        self._follow_s = matches.settings.tournament_follow_s
        self._runner = TournamentRunner(
            self._store, matches, notify, None if owners is None else self._follow_s
        )
        self._memory = HeldTournaments(self._store)
        """The tournaments held in memory (server.tournaments.held)."""
        self._held = self._memory.held
        self._sync = TournamentSync(self._memory, self._store, self._runner)
        self._games = games
        self._owners = owners
        self._unclaimed: set[str] = set()
        self._follower: asyncio.Task[None] | None = None

    # -- life cycle ----------------------------------------------------------------------------

    async def resume(self) -> int:
        """Restart every running tournament's task; return how many were resumed.

        Call it before `MatchLifecycle.resume`: it registers the matches in flight first.
        In a cluster none is resumed here: `reap` claims those without a live owner.
        """
        ids = await self._store.running_ids()
        for tournament_id in ids:
            async with self._held(tournament_id) as tournament:
                # The workers queue again the games of theirs that have no job (a crash
                # between the start and the jobs): server.jobs.tournament_games.
                if not self._on_workers(tournament) and self._owners is None:
                    await self._launch(tournament)
        if (self._games is not None or self._owners is not None) and self._follower is None:
            self._follower = asyncio.create_task(
                self._sync.follow(self._follow_s, self._elsewhere), name="arena-tournament-follower"
            )
        return len(ids)

    async def close(self) -> None:
        """Stop the tournaments' tasks (their matches stay stored and resume on restart)."""
        if self._follower is not None:
            self._follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._follower
        held = [t.id for t in self._runner.running()]
        await self._runner.close()
        if self._owners is not None:
            try:
                await self._owners.release(held)
            except Exception:
                log.exception("could not release the tournaments run here")

    async def reap(self) -> int:
        """In a cluster, a round of the reaper (server.cluster.processes): stop the runners
        here whose tournament another process claimed, then claim and resume this process's
        share of the running tournaments played by a runner whose owner is dead or none (see
        server.tournaments.owners); return how many."""
        if self._owners is None:
            return 0
        running = self._runner.running()
        stored = await self._owners.owners([t.id for t in running])
        for tournament in running:
            owner = stored.get(tournament.id)
            if owner is None or owner.epoch != tournament.epoch:
                log.warning(
                    "tournament %s was claimed by %s: its runner here stops",
                    tournament.id,
                    None if owner is None else owner.owner_id,
                )
                await self._runner.abandon(tournament)
        taken = 0
        candidates = await self._owners.claimable()
        mine = set(self._unclaimed.intersection(candidates))  # unclaimed for a whole round
        self._unclaimed = set(candidates)
        if candidates:
            live = await self._owners.live_ids()
            mine.update(share(candidates, live, self._owners.process_id))
        for tournament_id in candidates:
            if tournament_id not in mine:
                continue
            async with self._held(tournament_id) as tournament:
                if await self._take_over(tournament, self._owners):
                    taken += 1
        return taken

    async def _take_over(self, tournament: HostedTournament, owners: TournamentOwners) -> bool:
        """Claim a running tournament played by a runner and run it here; return whether."""
        if self._on_workers(tournament):
            return False
        epoch = await owners.claim(tournament.id)
        if epoch is None:
            return False
        await self._sync.refresh(tournament)
        if tournament.status != "running":
            return False
        tournament.epoch = epoch
        await self._launch(tournament)
        log.info("took tournament %s over (epoch %d)", tournament.id, epoch)
        return True

    def wants_match(self, match_id: str, players: object = None, seqs: object = None) -> bool:
        """Return True for a match a runner here waits for (a `Bus.on_match` filter)."""
        return self._runner.wants(match_id)

    async def on_remote_match(self, item: object) -> None:
        """Notice the end of a match another process plays (a `Bus.on_match` handler)."""
        await self._runner.on_remote(item)

    async def on_broadcast(self, broadcast: Broadcast) -> None:
        """Notice the end of a watched match (the runner waits for it)."""
        await self._runner.on_broadcast(broadcast)

    # -- requests ------------------------------------------------------------------------------

    async def create(self, body: TournamentCreate, creator: Player) -> TournamentState:
        """Store a new tournament (status created) owned by `creator`.

        Every registered player it names other than `creator` is invited: the owner can start
        it once all of them have accepted. VALIDATION_ERROR naming a bad field.
        """
        settings = self._matches.settings
        check_maxima(body, settings)  # cheap, on the loop: a tournament too large fails at once
        # Planned to check the openings and count the games; the schedule is planned again when
        # the tournament starts (up to 16 MB at the maxima: a waiting tournament holds none).
        games_total = planned_total(body, (await asyncio.to_thread(plan, body, settings))[1])
        invitations = await invited(body, creator, self._matches.players)
        tournament = HostedTournament(
            id="t_" + uuid.uuid4().hex[:16],
            body=body,
            status="created",
            games_total=games_total,
            created_ms=int(self._wall() * 1000),
            owner_id=creator.id,
            owner_name=creator.name,
            invitations=invitations,
        )
        await self._store.add(tournament)
        return await tournament.state()

    async def start(self, tournament_id: str, player: Player) -> TournamentState:
        """Start a created tournament; a running or finished one is returned as it is.

        Only its owner may start it (FORBIDDEN), once every invited player has accepted
        (INVITATIONS_PENDING, naming who has not).
        """
        async with self._held(tournament_id) as tournament:
            return await self._start(tournament, player)

    async def _start(self, tournament: HostedTournament, player: Player) -> TournamentState:
        """`start` on a held tournament."""
        check_owner(tournament, player, "start")
        several = self._owners is not None or self._games is not None
        if tournament.status == "created" and several:
            # Several processes: the answers (or a start) may have come to another one.
            stored = await self._store.load(tournament.id)
            if stored is not None:
                tournament.invitations = stored.invitations
                if stored.status != "created":
                    await self._sync.refresh(tournament)
        if tournament.status == "created":
            check_accepted(tournament)
            if self._owners is not None and not self._on_workers(tournament):
                # A cluster: started and claimed at once, by this process only.
                epoch = await self._owners.start(tournament.id)
                if epoch is None:
                    # Started (or cancelled) by another call.
                    await self._sync.refresh(tournament)
                    return await tournament.state()
                tournament.status = "running"
                tournament.epoch = epoch
                await self._launch(tournament)
                return await tournament.state()
            tournament.status = "running"
            await self._store.store_status(tournament)
            if self._on_workers(tournament):
                await self._defer_unplayed(tournament)
            else:
                await self._launch(tournament)
        return await tournament.state()

    async def cancel(self, tournament_id: str, player: Player) -> TournamentState:
        """Cancel a created or running tournament: no more games start, those in play stop.

        Only its owner may cancel it (FORBIDDEN); an ended one gives TOURNAMENT_OVER. A game
        stopped in play keeps no result (its match is adjudicated a draw, not counted).
        """
        async with self._held(tournament_id) as tournament:
            return await self._cancel(tournament, player)

    async def _cancel(self, tournament: HostedTournament, player: Player) -> TournamentState:
        """`cancel` on a held tournament."""
        check_owner(tournament, player, "cancel")
        if tournament.status not in ("created", "running"):
            raise ProtocolError(
                ErrorCode.TOURNAMENT_OVER,
                f"the tournament is {tournament.status}: it cannot be cancelled",
                {"tournament_id": tournament.id},
            )
        if self._owners is not None and not runs_here(tournament):
            # Run by another process: know its games in play (their matches are stopped here
            # too; its owner stops its runner on the end's notice).
            await self._sync.refresh(tournament)
        tournament.status = "cancelled"
        tournament.reason = f"cancelled by {player.name}"
        await self._store.store_status(tournament)
        await self._runner.stop(tournament, "the tournament was cancelled")
        await self._runner.tell(ended_notice(tournament.id))
        return await tournament.state()

    async def answer(self, tournament_id: str, player: Player, accept: bool) -> TournamentState:
        """Record `player`'s answer to the tournament's invitation (accept, or decline).

        NOT_CHALLENGED when the tournament does not invite `player`; TOURNAMENT_OVER once it
        has started or ended (answers count only before the start).
        """
        async with self._held(tournament_id) as tournament:
            return await self._answer(tournament, player, accept)

    async def _answer(
        self, tournament: HostedTournament, player: Player, accept: bool
    ) -> TournamentState:
        """`answer` on a held tournament."""
        check_invited(tournament, player)
        if tournament.status == "created":
            # One answer stored under the row's lock: answers given to other processes stand.
            found = await self._store.store_answer(
                tournament.id, player.name, "accepted" if accept else "declined"
            )
            if found is not None:
                status, tournament.invitations = found
                if status != "created":
                    # Started (or cancelled) elsewhere.
                    await self._sync.refresh(tournament)
        if tournament.status != "created":
            raise ProtocolError(
                ErrorCode.TOURNAMENT_OVER,
                f"the tournament is {tournament.status}: invitations are answered before it starts",
                {"tournament_id": tournament.id},
            )
        return await tournament.state()

    async def state(self, tournament_id: str) -> TournamentState:
        """Return a tournament's state with its standings and games."""
        async with self._held(tournament_id) as tournament:
            return await tournament.state()

    async def list_tournaments(self, limit: int = 50, offset: int = 0) -> TournamentList:
        """Return a page of tournaments, newest first."""
        return await self._store.page(limit, offset)

    async def watch(self, tournament_id: str, watcher: Watcher) -> None:
        """Send `watcher` the tournament's state now, then every progress message."""
        async with self._held(tournament_id) as tournament:
            state = await tournament.state()
            # No await from here: the watcher gets every message after the state it was sent.
            watcher(state)
            tournament.watchers.add(watcher)  # held while watched

    def unwatch(self, tournament_id: str, watcher: Watcher) -> None:
        """Stop sending to `watcher` (a tournament no longer watched may leave memory)."""
        tournament = self._memory.loaded.get(tournament_id)
        if tournament is not None:
            tournament.watchers.discard(watcher)
            self._memory.release(tournament)

    @property
    def loaded_count(self) -> int:
        """Return how many tournaments are held in memory (run or watched here, or in use)."""
        return len(self._memory.loaded)

    # -- tournaments played on workers ---------------------------------------------------------

    def _on_workers(self, tournament: HostedTournament) -> bool:
        """Return True when workers play the tournament's games (`is_for_workers`)."""
        return self._games is not None and is_for_workers(
            tournament.body, hosted=self._matches.settings.worker.hosted
        )

    async def _defer_unplayed(self, tournament: HostedTournament) -> None:
        """Queue a job for every game of the tournament that has no result yet (of a Swiss
        tournament, those of its current round: the workers queue each next one)."""
        assert self._games is not None
        unplayed = [
            index
            for index in range(tournament.games_total)
            if (game := tournament.games.get(index)) is None or game.result is None
        ]
        await self._games.defer(
            tournament.id, current_round(tournament.body, tournament.games_total, unplayed)
        )

    async def on_notice(self, payload: dict[str, Any]) -> None:
        """Take a notice from another process (or this one): a game recorded, an end
        (server.tournaments.sync)."""
        await self._sync.on_notice(payload)

    def _elsewhere(self, tournament: HostedTournament) -> bool:
        """Return True when other processes play the tournament: workers, or its owner."""
        return self._on_workers(tournament) or (
            self._owners is not None and not runs_here(tournament)
        )

    async def _launch(self, tournament: HostedTournament) -> None:
        """Start the tournament's runner here; the tournament is held until the runner ends."""
        await self._runner.launch(tournament)
        if tournament.runner is not None:
            tournament.runner.add_done_callback(lambda _: self._memory.release(tournament))
