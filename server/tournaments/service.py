"""The tournament service: who may create, start, cancel, answer and read tournaments.

`TournamentService` decides the policies (the server's maxima, the invitations, the owner's
rights); the planning is server.tournaments.planning's, the storage server.tournaments.store's
and the playing server.tournaments.runner's.

Memory: the service holds a tournament while its runner runs here, while someone watches it
here, and while a request uses it (concurrent requests share that one copy); any other is read
from the database when asked, so finished, cancelled and waiting tournaments cost nothing. A
waiting tournament holds no schedule either: it is planned at creation to be checked and
counted, and again when it starts.

On workers (`ARENA_ROLE=server`, a `GameQueue` given): a tournament between house bots only is
not played here, unless it is an SPRT (its test decides which games are played at all). Starting
it stores it `running` and defers one job per game to the queue; `arena worker` processes play
them (server.jobs.tournament_games), each records its game once and the last one finishes the
tournament (TournamentStore.record_game), and each publishes a notice
(server.tournaments.notices) that every server process hands to `on_notice`. The tournament's
`concurrency` is ignored there: the workers' own concurrency bounds the games in play. A game is
shown once it has its result (it has no live match to watch while played). A notice may be lost
(Redis restarted) or come twice: every `tournament_follow_s` the service reads the running
worker tournaments it holds from the database (`_follow`), and it tells its watchers of each
game once and of the end once, whichever comes first. A tournament with a registered player
among its participants is played as today, by a server process's runner (its games are live
matches: the players connect to play them); its games and end are published on the bus too, so
watchers on other processes follow it.

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
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import (
    TournamentCreate,
    TournamentFinished,
    TournamentGame,
    TournamentGameFinished,
    TournamentList,
    TournamentState,
)
from server.cluster.leases import share
from server.db.models import Player
from server.matches.publisher import Broadcast
from server.matches.service import MatchService
from server.tournaments.notices import ENDED, ended_notice, parse_notice
from server.tournaments.owners import TournamentOwners
from server.tournaments.planning import check_maxima, plan, validation_error
from server.tournaments.played import is_for_workers
from server.tournaments.runner import Notify, TournamentRunner
from server.tournaments.store import TournamentStore
from server.tournaments.tournament import HostedTournament, Watcher
from tournament.runner import player_name

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
        self._loaded: dict[str, HostedTournament] = {}
        """The tournaments held in memory: each one whose runner runs here, is watched here, or
        is in use by a request (`_users`). The others are read from the database when asked
        (`_held`): a finished, cancelled or waiting tournament costs no memory."""
        self._users: Counter[str] = Counter()
        """The requests using each held tournament now."""
        self._loading: dict[str, asyncio.Future[HostedTournament | None]] = {}
        """The reads from the database in progress, by tournament id."""
        self._games = games
        self._owners = owners
        self._unclaimed: set[str] = set()
        self._follower: asyncio.Task[None] | None = None

    # -- life cycle ----------------------------------------------------------------------------

    async def resume(self) -> int:
        """Restart every running tournament's task; return how many were resumed.

        Call it before `MatchService.resume`: it registers the matches in flight first.
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
            self._follower = asyncio.create_task(self._follow(), name="arena-tournament-follower")
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
        await self._refresh(tournament)
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

    def _runs_here(self, tournament: HostedTournament) -> bool:
        return tournament.runner is not None and not tournament.runner.done()

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
        games_total = len((await asyncio.to_thread(plan, body, settings))[1])
        invitations = {}
        for participant in body.bots:
            name = player_name(participant)
            if name is None:
                continue
            player = await self._matches.players.named(name)
            if player is None:
                raise validation_error(
                    "bots", f"no player is named {name!r} (from {participant!r})"
                )
            if player.id != creator.id:
                invitations[player.name] = "pending"
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
        self._check_owner(tournament, player, "start")
        several = self._owners is not None or self._games is not None
        if tournament.status == "created" and several:
            # Several processes: the answers (or a start) may have come to another one.
            stored = await self._store.load(tournament.id)
            if stored is not None:
                tournament.invitations = stored.invitations
                if stored.status != "created":
                    await self._refresh(tournament)
        if tournament.status == "created":
            waiting = {n: a for n, a in tournament.invitations.items() if a != "accepted"}
            if waiting:
                raise ProtocolError(
                    ErrorCode.INVITATIONS_PENDING,
                    "the tournament can start once every invited player has accepted: "
                    + ", ".join(f"{name} ({answer})" for name, answer in sorted(waiting.items())),
                    {"tournament_id": tournament.id, **waiting},
                )
            if self._owners is not None and not self._on_workers(tournament):
                # A cluster: started and claimed at once, by this process only.
                epoch = await self._owners.start(tournament.id)
                if epoch is None:
                    await self._refresh(tournament)  # started (or cancelled) by another call
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
        self._check_owner(tournament, player, "cancel")
        if tournament.status not in ("created", "running"):
            raise ProtocolError(
                ErrorCode.TOURNAMENT_OVER,
                f"the tournament is {tournament.status}: it cannot be cancelled",
                {"tournament_id": tournament.id},
            )
        if self._owners is not None and not self._runs_here(tournament):
            # Run by another process: know its games in play (their matches are stopped here
            # too; its owner stops its runner on the end's notice).
            await self._refresh(tournament)
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
        if player.name not in tournament.invitations:
            raise ProtocolError(
                ErrorCode.NOT_CHALLENGED,
                f"the tournament does not invite {player.name}",
                {"tournament_id": tournament.id},
            )
        if tournament.status == "created":
            # One answer stored under the row's lock: answers given to other processes stand.
            found = await self._store.store_answer(
                tournament.id, player.name, "accepted" if accept else "declined"
            )
            if found is not None:
                status, tournament.invitations = found
                if status != "created":
                    await self._refresh(tournament)  # started (or cancelled) elsewhere
        if tournament.status != "created":
            raise ProtocolError(
                ErrorCode.TOURNAMENT_OVER,
                f"the tournament is {tournament.status}: invitations are answered before it starts",
                {"tournament_id": tournament.id},
            )
        return await tournament.state()

    def _check_owner(self, tournament: HostedTournament, player: Player, action: str) -> None:
        """Refuse (FORBIDDEN) anyone but the tournament's owner."""
        if tournament.owner_id != player.id:
            owner = tournament.owner_name or "the server"
            raise ProtocolError(
                ErrorCode.FORBIDDEN,
                f"only the tournament's owner ({owner}) may {action} it",
                {"tournament_id": tournament.id},
            )

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
        tournament = self._loaded.get(tournament_id)
        if tournament is not None:
            tournament.watchers.discard(watcher)
            self._release(tournament)

    @property
    def loaded_count(self) -> int:
        """Return how many tournaments are held in memory (run or watched here, or in use)."""
        return len(self._loaded)

    # -- tournaments played on workers ---------------------------------------------------------

    def _on_workers(self, tournament: HostedTournament) -> bool:
        """Return True when workers play the tournament's games (`is_for_workers`)."""
        return self._games is not None and is_for_workers(tournament.body)

    async def _defer_unplayed(self, tournament: HostedTournament) -> None:
        """Queue a job for every game of the tournament that has no result yet."""
        assert self._games is not None
        unplayed = [
            index
            for index in range(tournament.games_total)
            if (game := tournament.games.get(index)) is None or game.result is None
        ]
        await self._games.defer(tournament.id, unplayed)

    async def on_notice(self, payload: dict[str, Any]) -> None:
        """Take a notice from another process (or this one): a game recorded, an end.

        A game's notice updates the tournament held here and tells its watchers, unless the
        game is known already; an end's reads the tournament back from the database (games
        whose notice was lost included). A tournament not held here is read when first asked.
        """
        notice = parse_notice(payload)
        if notice is None:
            log.warning("ignored a tournament notice: %.200r", payload)
            return
        loading = self._loading.get(notice.tournament_id)
        if loading is not None:  # being read: held by the requests waiting for it, woken first
            with contextlib.suppress(Exception):
                await asyncio.shield(loading)
        tournament = self._loaded.get(notice.tournament_id)
        if tournament is None:
            return
        if notice.game is not None:
            if tournament.status == "created":
                tournament.status = "running"  # started by another process: games come in
            self._record(tournament, notice.game)
        else:
            await self._sync(tournament)

    async def _follow(self) -> None:
        """Every `tournament_follow_s`, read back the worker tournaments held that have not
        ended (lost notices, a start on another process)."""
        while True:
            await asyncio.sleep(self._follow_s)
            for tournament in list(self._loaded.values()):
                # Created ones too: another process may have started it.
                elsewhere = self._owners is not None and not self._runs_here(tournament)
                if tournament.status not in ENDED and (self._on_workers(tournament) or elsewhere):
                    try:
                        await self._sync(tournament)
                    except Exception:
                        log.exception("could not read tournament %s back", tournament.id)

    async def _refresh(self, tournament: HostedTournament) -> None:
        """Take the tournament's stored games, those in play included, and its status."""
        stored = await self._sync(tournament)
        if stored is not None:
            for index, game in stored.games.items():
                tournament.games.setdefault(index, game)

    async def _sync(self, tournament: HostedTournament) -> HostedTournament | None:
        """Take the tournament's stored results and status: tell the watchers what they lack.

        A tournament run here that ended elsewhere (cancelled on another process) has its
        runner stopped first. Return the stored tournament (None: there is none)."""
        stored = await self._store.load(tournament.id)
        if stored is None:
            return None
        ended_elsewhere = stored.status in ENDED and tournament.status not in ENDED
        if ended_elsewhere and self._runs_here(tournament):
            await self._runner.halt(tournament, stored.reason or "the tournament ended")
        for index in sorted(stored.games):
            game = stored.games[index]
            if game.result is not None:
                self._record(tournament, game)
        if stored.status == "running" and tournament.status == "created":
            tournament.status = "running"  # started by another process
        if stored.status in ENDED and tournament.status not in ENDED:
            tournament.status = stored.status
            tournament.reason = stored.reason
            # The standings are fitted off the loop: no other end is told meanwhile.
            finished = TournamentFinished(
                tournament_id=tournament.id,
                games_done=tournament.done,
                games_total=tournament.games_total,
                standings=await tournament.fresh_standings(),
                sprt=tournament.sprt(),
            )
            tournament.publish(finished)
        return stored

    def _record(self, tournament: HostedTournament, game: TournamentGame) -> None:
        """Hold a game's result and tell the watchers, once per game (no await here)."""
        known = tournament.games.get(game.index)
        if known is not None and known.result is not None:
            return
        tournament.record_result(game)
        tournament.publish(
            TournamentGameFinished(
                tournament_id=tournament.id,
                game=game,
                games_done=tournament.done,
                games_total=tournament.games_total,
                points=tournament.points(),
                sprt=tournament.sprt(),
            )
        )

    async def _launch(self, tournament: HostedTournament) -> None:
        """Start the tournament's runner here; the tournament is held until the runner ends."""
        await self._runner.launch(tournament)
        if tournament.runner is not None:
            tournament.runner.add_done_callback(lambda _: self._release(tournament))

    @contextlib.asynccontextmanager
    async def _held(self, tournament_id: str) -> AsyncIterator[HostedTournament]:
        """Hold the tournament while the caller uses it (read from the database unless held
        already: concurrent requests share one copy); then let it go unless it must stay
        (`_release`). UNKNOWN_TOURNAMENT when there is none."""
        tournament = await self._get(tournament_id)
        self._users[tournament.id] += 1  # no await since `_get`: not let go meanwhile
        try:
            yield tournament
        finally:
            self._users[tournament.id] -= 1
            if self._users[tournament.id] <= 0:
                del self._users[tournament.id]
            self._release(tournament)

    def _release(self, tournament: HostedTournament) -> None:
        """Let the tournament leave memory unless its runner runs here, someone watches it
        here or a request uses it; it is read from the database when next asked."""
        if self._users.get(tournament.id) or tournament.watchers or self._runs_here(tournament):
            return
        if self._loaded.get(tournament.id) is tournament:
            del self._loaded[tournament.id]

    async def _get(self, tournament_id: str) -> HostedTournament:
        """Return the held tournament, or read it from the database and hold it (the caller
        lets it go: `_held`)."""
        tournament = self._loaded.get(tournament_id)
        if tournament is not None:
            return tournament
        # One read per tournament at a time, shared by the requests that want it; reads of
        # different tournaments (a large finished one takes a while) do not wait for each other.
        loading = self._loading.get(tournament_id)
        if loading is None:
            loading = asyncio.ensure_future(self._store.load(tournament_id))
            self._loading[tournament_id] = loading
            loading.add_done_callback(lambda _: self._loading.pop(tournament_id, None))
        found = await asyncio.shield(loading)
        if found is None:
            raise ProtocolError(
                ErrorCode.UNKNOWN_TOURNAMENT,
                f"no tournament has id {tournament_id!r}",
                {"tournament_id": tournament_id},
            )
        # The first request back holds the copy read; the others share it (or, if every
        # request let it go meanwhile, the copy held now: there is one at a time). A request
        # cancelled while the read runs holds nothing, so nothing stays held for it.
        return self._loaded.setdefault(tournament_id, found)
