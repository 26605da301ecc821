"""The FastAPI application, built from settings: `create_app(settings)`.

Nothing is created at import time: the database engine and session maker live on
`app.state`, made in the lifespan and disposed when the server stops.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from server.access_log import install_redaction
from server.asgi import ArenaApp
from server.body_limit import BodyLimit
from server.courses import CourseService
from server.db.engine import create_engine, migrate, session_factory
from server.db.writer import BatchWriter
from server.grading import GradingService
from server.hub import Hub
from server.jobs import build_queue, ensure_schema
from server.match_queries import MatchQueries
from server.matches import MatchService
from server.openapi import install_openapi
from server.players import PlayerRegistry
from server.ratelimit import RateLimitedError, RateLimiter, rate_limited_response
from server.ratings import RatingService
from server.routes import install
from server.routes.courses import BODY_LIMIT_EXEMPT as COURSE_BODY_LIMIT_EXEMPT
from server.routes.web_courses import BODY_LIMIT_EXEMPT as COURSE_FORMS_BODY_LIMIT_EXEMPT
from server.settings import Settings
from server.tournaments import TournamentService
from server.web.pages import Pages
from server.web.security import NoSniff

API_VERSION = "0.1.0"

BODY_LIMIT_EXEMPT = (
    ("POST", "/grader/jobs"),
    ("POST", "/web/grader/jobs"),
    *COURSE_BODY_LIMIT_EXEMPT,
    *COURSE_FORMS_BODY_LIMIT_EXEMPT,
)
"""The routes that take bodies over `max_body_bytes`: the grader's uploads (REST and the page's
form) and the course routes' uploads and roster imports (REST and the pages' forms), with their
own limits."""


def create_app(settings: Settings) -> FastAPI:
    """Return the Arena server application for `settings` (migrates its database on start)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = create_engine(settings.database_url)
        await migrate(engine)
        app.state.engine = engine
        app.state.sessions = session_factory(engine)
        players = PlayerRegistry(app.state.sessions)
        app.state.players = players
        service = MatchService(
            app.state.sessions,
            settings,
            writer=BatchWriter(engine, commit_delay=settings.commit_delay_ms / 1000),
            players=players,
        )
        app.state.service = service
        app.state.queries = MatchQueries(service)
        hub = Hub()
        app.state.hub = hub
        service.listeners.append(hub.publish)
        tournaments = TournamentService(app.state.sessions, service)
        app.state.tournaments = tournaments
        service.listeners.append(tournaments.on_broadcast)
        ratings = RatingService(app.state.sessions)
        app.state.ratings = ratings
        service.listeners.append(ratings.on_broadcast)
        # Role `server`: grading jobs go to the queue in PostgreSQL for `arena worker`s.
        queue = None
        if settings.role == "server":
            await ensure_schema(settings)
            queue = build_queue(settings)
            await queue.open_async()
        grading = GradingService(app.state.sessions, settings, queue)
        app.state.grading = grading
        courses = CourseService(app.state.sessions, settings, grading)
        app.state.courses = courses
        app.state.rate_limiter = RateLimiter(settings)
        try:
            await tournaments.resume()
            await service.resume()
            await ratings.resume()
            service.start_ticker()
            await grading.start()
            await courses.start()
            yield
        finally:
            await courses.close()
            await grading.close()
            if queue is not None:
                await queue.close_async()
            await app.state.rate_limiter.close()
            await tournaments.close()
            await hub.close()
            await service.close()
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
    install_redaction()
    install(app)
    app.add_exception_handler(RateLimitedError, rate_limited_response)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes, exempt=BODY_LIMIT_EXEMPT)
    app.add_middleware(NoSniff)
    install_openapi(app, body_limit_exempt=BODY_LIMIT_EXEMPT)
    return app
