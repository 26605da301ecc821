"""uvicorn's server for `arena serve`, imported only when serving (uvicorn is slow to import)."""

from __future__ import annotations

import socket

import uvicorn

from cli.server import tune_garbage_collector


class TunedServer(uvicorn.Server):
    """uvicorn's server, tuning the garbage collector once the application has started."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        # After the lifespan: the migrations' garbage is gone and the services are built, so
        # what is frozen is what lives for good.
        tune_garbage_collector()
