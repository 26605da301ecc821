"""The FastAPI application, built from settings: `create_app(settings)`.

Nothing is created at import time: the database engine and session maker live on
`app.state`, made in the lifespan and disposed when the server stops.

Clustered (`Settings.clustered`), the lifespan also builds the Redis bus (`app.state.bus`,
server.cluster.bus): this process's match broadcasts are published to the others, and theirs
reach this process's hub through the bridge (server.cluster.bridge). Each match is owned by
one process (server.cluster.leases): the cluster's router (server.cluster.routing) wraps the
match service, sending calls on matches owned elsewhere to their owner over the bus
(server.cluster.forwarding), and the membership
(server.cluster.processes) keeps this process's heartbeat and takes over the matches of dead
processes. Not clustered, `app.state.bus` is None and nothing else changes.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from bots.engine.compiled import load_cores
from sandbox import can_isolate
from server.access_log import install_redaction
from server.asgi import ArenaApp
from server.classes import ClassTournaments
from server.cluster.bridge import MatchBridge, OnePerPlayer
from server.cluster.bus import Bus, new_process_id
from server.cluster.forwarding import BusRemote
from server.cluster.leases import Leases
from server.cluster.presence import ClusterPresence
from server.cluster.processes import Membership, ProcessTable
from server.cluster.routing import MatchRouter
from server.courses import CourseService
from server.db.engine import create_engine, migrate, session_factory
from server.db.leader import Leadership
from server.db.writer import BatchWriter
from server.explore import Explorer
from server.grading import GradingService
from server.hosted import HostedBots
from server.hosted.launch import Launcher
from server.hub import Hub
from server.jobs import build_queue, ensure_schema
from server.jobs.tournament_games import TournamentGameQueue
from server.limits.bodies import BodyLimit
from server.limits.rates import RateLimitedError, RateLimiter, rate_limited_response
from server.limits.slots import ComputeSlots, Split
from server.matches.queries import MatchQueries
from server.matches.service import MatchService
from server.openapi import install_openapi
from server.players import PlayerRegistry
from server.pool import POOL_LEADER_LOCK, PoolService
from server.presence import Presence
from server.ratings import RatingService
from server.routes import install
from server.routes.courses import BODY_LIMIT_EXEMPT as COURSE_BODY_LIMIT_EXEMPT
from server.routes.web_courses import BODY_LIMIT_EXEMPT as COURSE_FORMS_BODY_LIMIT_EXEMPT
from server.routes.web_hosted import UPLOAD_FORM as HOSTED_UPLOAD_FORM
from server.settings import Settings
from server.tournaments import TournamentService
from server.tournaments.notices import TOPIC as TOURNAMENT_TOPIC
from server.tournaments.owners import TournamentOwners
from server.web.pages import Pages
from server.web.security import NoSniff

API_VERSION = "0.1.0"

BODY_LIMIT_EXEMPT = (
    ("POST", "/grader/jobs"),
    ("POST", "/web/grader/jobs"),
    *COURSE_BODY_LIMIT_EXEMPT,
    *COURSE_FORMS_BODY_LIMIT_EXEMPT,
    ("POST", "/hosted-bots/{owner}/{name}/versions"),
    ("POST", HOSTED_UPLOAD_FORM),
)
"""The routes that take bodies over `max_body_bytes`: the grader's uploads (REST and the page's
form), the course routes' uploads and roster imports (REST and the pages' forms), and a hosted
bot's versions (REST and the bot page's form), with their own limits."""


def create_app(settings: Settings) -> FastAPI:
    """Return the Arena server application for `settings` (migrates its database on start)."""
    if settings.role == "worker":
        raise ValueError("ARENA_ROLE=worker runs queued jobs with `arena worker`, not a server")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = create_engine(settings.database_url)
        await migrate(engine)
        app.state.engine = engine
        app.state.sessions = session_factory(engine)
        players = PlayerRegistry(app.state.sessions)
        app.state.players = players
        process_id = new_process_id()
        leases = None
        if settings.clustered:
            leases = Leases(app.state.sessions, process_id, settings.lease_ttl_ms)
        service = MatchService(
            app.state.sessions,
            settings,
            writer=BatchWriter(engine, commit_delay=settings.commit_delay_ms / 1000),
            players=players,
            ownership=leases,
        )
        app.state.service = service
        # The house engine's compiled searches, loaded (compiled once per machine) off the
        # event loop, so that building a house bot there finds them ready.
        threading.Thread(target=load_cores, name="arena-core-load", daemon=True).start()
        app.state.queries = MatchQueries(service)
        hub = Hub()
        app.state.hub = hub
        service.listeners.append(hub.publish)
        bus: Bus | None = None
        bridge: MatchBridge | None = None
        one_per_player: OnePerPlayer | None = None
        membership: Membership | None = None
        if leases is not None:
            # Several processes: this one's broadcasts go to the others' hubs, and theirs to ours.
            bus = Bus(settings, process_id)
            bridge = MatchBridge(hub, service)
            bus.on_match(bridge.deliver, bridge.wanted)
            one_per_player = OnePerPlayer(hub, bus)
            bus.on_reconnect(bridge.resync_all)
            service.listeners.append(bus.publish_match)
            # Calls on matches owned elsewhere go to their owner; theirs on ours come here.
            router = MatchRouter(service, leases, settings.lease_ttl_ms)
            service.route = router
            remote = BusRemote(bus, router.serve)
            router.remote = remote
            bus.serve(remote.handle)
            table = ProcessTable(app.state.sessions, process_id, "server", settings.lease_ttl_ms)
            membership = Membership(
                table,
                leases,
                service.lifecycle,
                lease_ttl_ms=settings.lease_ttl_ms,
                heartbeat_ms=settings.heartbeat_ms,
            )
        app.state.bus = bus
        app.state.membership = membership
        # The bots online: this process's, and in a cluster every process's through Redis.
        presence = Presence(hub) if leases is None else ClusterPresence(hub, settings, process_id)
        app.state.presence = presence
        # Role `server`: grading jobs and house-bot tournaments' games go to the queue in
        # PostgreSQL for `arena worker`s.
        queue = None
        if settings.role == "server":
            await ensure_schema(settings)
            queue = build_queue(settings)
            await queue.open_async()
        app.state.queue = queue
        tournaments = TournamentService(
            app.state.sessions,
            service,
            games=None if queue is None else TournamentGameQueue(queue),
            notify=None if bus is None else functools.partial(bus.publish, TOURNAMENT_TOPIC),
            owners=None
            if leases is None
            else TournamentOwners(app.state.sessions, process_id, settings.lease_ttl_ms),
        )
        if bus is not None:
            bus.subscribe(TOURNAMENT_TOPIC, tournaments.on_notice)
            # A tournament's runner sees the ends of its matches played by other processes.
            bus.on_match(tournaments.on_remote_match, tournaments.wants_match)
        if membership is not None:
            membership.also.append(tournaments.reap)  # one owner runs each tournament's runner
        app.state.tournaments = tournaments
        service.listeners.append(tournaments.on_broadcast)
        ratings = RatingService(app.state.sessions)
        app.state.ratings = ratings
        service.listeners.append(ratings.on_broadcast)
        slots = ComputeSlots(Split.of(settings))  # grading's and hosted bots' sandboxes
        grading = GradingService(app.state.sessions, settings, queue, slots=slots)
        app.state.grading = grading
        courses = CourseService(app.state.sessions, settings, grading)
        app.state.courses = courses
        launcher = Launcher(settings, slots)
        hosted = HostedBots(app.state.sessions, settings, launcher, can_isolate)
        app.state.hosted = hosted
        service.host(hosted)
        # One process pairs the pools: with PostgreSQL, the holder of the pools' lock.
        pools = PoolService(
            app.state.sessions,
            settings,
            service,
            hosted,
            presence,
            Leadership(engine, *POOL_LEADER_LOCK, "the rated pools' pairing"),
        )
        app.state.pools = pools
        app.state.classes = ClassTournaments(
            app.state.sessions, settings, courses, hosted, tournaments
        )
        app.state.rate_limiter = RateLimiter(settings)
        app.state.explorer = Explorer(settings)
        try:
            if membership is not None:
                await membership.join()  # alive before it serves a call or claims a match
            if bus is not None:
                await bus.start()
            await presence.start()
            await tournaments.resume()
            if membership is None:
                await service.lifecycle.resume()
            else:
                await membership.start()  # takes over its share of matches without an owner
            await ratings.resume()
            service.start_ticker()
            await grading.start()
            await courses.start()
            pools.start()
            yield
        finally:
            await pools.close()
            await courses.close()
            await grading.close()
            if queue is not None:
                await queue.close_async()
            await app.state.rate_limiter.close()
            app.state.explorer.close()
            await tournaments.close()
            await hub.close()
            await presence.close()
            await service.close()
            if membership is not None:
                await membership.close()  # hands its matches over (after storing them)
            if bridge is not None:
                await bridge.close()
            if one_per_player is not None:
                await one_per_player.close()
            if bus is not None:
                await bus.close()
            await ratings.close()
            await engine.dispose()

    app = ArenaApp(
        title="Arena",
        version=API_VERSION,
        description="Matches and tournaments between game-playing search bots over REST and "
        "WebSockets, and a hosted checkers autograder.",
        lifespan=lifespan,
        # `/docs` is Arena's own page (server/routes/api_docs.py): FastAPI's load from a CDN.
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.pages = Pages()
    install(app)
    install_redaction(app.routes)  # after the routes: their credential path parameters too
    app.add_exception_handler(RateLimitedError, rate_limited_response)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes, exempt=BODY_LIMIT_EXEMPT)
    app.add_middleware(NoSniff)
    install_openapi(app, body_limit_exempt=BODY_LIMIT_EXEMPT)
    return app
