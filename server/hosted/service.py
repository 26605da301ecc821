"""Hosted bots' policies: who may create and change a bot, what an upload must be, and the
seats of matches a hosted bot takes (docs/PROTOCOL.md, "Hosted bots").

An upload becomes a version in four steps, the first three off the event loop: it is unpacked
and checked (file names, sizes, Python that compiles, the file to run), written to the private
directory, started once in the sandbox (it must answer the engine protocol's handshake:
`ready`, else `refused` with the reason, kept for its owner), and stored. A bot's first ready
version becomes active; the owner chooses another with PATCH.

A match seats `hosted:OWNER/NAME` as the active version's own spec `hosted:OWNER/NAME@N`;
`build` makes its player from the files alone, and the program starts in the sandbox when the
bot is first to move, on the house bots' search threads. A failure (a crash, a hang, output
that is not a move) loses the game: the opponent reads only that the hosted bot failed; the
owner reads why (`failures`), and after `failures_to_pause` in a row the bot is paused.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bots.programs.child import EngineError
from bots.result import SearchResult, Stop
from bots.spec import Bot, BotSpec
from games import game_names
from games.base import Game, State
from games.registry import get_game
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import (
    HostedBot,
    HostedBotCreate,
    HostedBotFailures,
    HostedBotList,
    HostedBotUpdate,
    HostedBotVersion,
)
from server.db.models import HostedBotVersion as VersionRow
from server.db.models import Player
from server.grading.uploads import Upload, UploadLimits, unpack
from server.hosted import files
from server.hosted.files import VersionFiles
from server.hosted.specs import HostedSpec, HostedSpecError, is_hosted, parse_hosted
from server.hosted.store import Found, HostedStore, bot_wire, version_wire
from server.settings import Settings

log = logging.getLogger(__name__)

CLASS_PREFIX = "class-"
"""The names of the bots class tournaments host for students (`HostedBots.adopt`)."""


@dataclass(frozen=True, slots=True)
class RunLimits:
    """What a hosted bot's process may use: memory (MiB), processes, the longest it may think
    over one move when its match has no clock, and CPU over its whole match."""

    memory_mb: int
    processes: int
    move_seconds: float
    cpu_seconds: int


class Program(Protocol):
    """A hosted bot's program running in the sandbox, spoken to in the engine protocol."""

    engine_name: str | None

    def choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        """Return its move for `state`; raise EngineError (bots.programs.child) when it fails."""
        ...

    def close(self) -> None:
        """End the program and its sandbox."""
        ...


Launcher = Callable[[VersionFiles, Game, RunLimits], Program]
"""Starts a version's program in the sandbox for a game; raises EngineError when it does not
start or answer the handshake."""


class HostedPlayer(Bot):
    """A hosted bot's version as a house bot of one match: its program starts in the sandbox
    when it is first asked for a move, and ends with `close()` (or when it is collected)."""

    def __init__(self, spec: HostedSpec, game: Game, start: Callable[[], Program]) -> None:
        super().__init__(BotSpec("hosted"), game, self._choose, judges=False)
        self.hosted = spec
        self._start = start
        self._program: Program | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return str(self.hosted)

    def _choose(self, state: State[Any], budget: float | None, stop: Stop | None) -> SearchResult:
        with self._lock:
            if self._program is None:
                self._program = self._start()
                self.engine_name = self._program.engine_name
            program = self._program
        return program.choose(state, budget, stop)

    def close(self) -> None:
        with self._lock:
            program, self._program = self._program, None
        if program is not None:
            program.close()


def _not_found(owner: str, name: str) -> ProtocolError:
    return ProtocolError(ErrorCode.NOT_FOUND, f"{owner} has no hosted bot named {name!r}")


def _not_owner(found: Found) -> ProtocolError:
    return ProtocolError(
        ErrorCode.FORBIDDEN, f"only {found.owner} may change or read the failures of {found.spec}"
    )


class HostedBots:
    """Hosted bots, their versions, and the seats and failures of their matches."""

    def __init__(
        self,
        sessions: async_sessionmaker[AsyncSession],
        settings: Settings,
        launcher: Launcher,
        can_sandbox: Callable[[], bool],
    ) -> None:
        self._store = HostedStore(sessions)
        self._settings = settings.hosted
        self._root = settings.hosted.dir
        self._max_seconds = settings.bot.max_seconds
        self._launch = launcher
        self._can_sandbox = can_sandbox
        self._limits = RunLimits(
            settings.hosted.memory_mb,
            settings.hosted.processes,
            settings.hosted.move_seconds,
            settings.hosted.cpu_seconds,
        )
        self._uploads = UploadLimits(
            max_bytes=settings.hosted.max_upload_bytes,
            max_files=settings.grader.max_files,
            max_zip_entries=settings.grader.max_zip_entries,
            max_path_depth=settings.grader.max_path_depth,
            max_path_chars=settings.grader.max_path_chars,
        )
        self._versions_lock = asyncio.Lock()

    @property
    def root(self) -> Path:
        return self._root

    def available(self) -> bool:
        """Whether hosted bots can run here: in the sandbox, or unsandboxed when allowed."""
        return self._settings.allow_unsandboxed or self._can_sandbox()

    async def create(self, owner: Player, body: HostedBotCreate) -> HostedBot:
        """Create `owner`'s bot `body.name` for `body.game`, with no version yet."""
        if body.game not in game_names():
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR,
                f"no game is called {body.game!r}: {', '.join(game_names())}",
                {"game": body.game},
            )
        if body.name.startswith(CLASS_PREFIX):
            raise ProtocolError(
                ErrorCode.VALIDATION_ERROR,
                f"names starting {CLASS_PREFIX!r} are the class tournaments' own: choose another",
                {"name": body.name},
            )
        quota = self._settings.bots_per_player
        if await self._store.count_owned(owner.id) >= quota:
            raise ProtocolError(
                ErrorCode.QUOTA_EXCEEDED,
                f"a player may own {quota} hosted bots; {owner.name} has as many",
                {"max_bots": quota},
            )
        try:
            row = await self._store.add(owner.id, body.name, body.game, body.description)
        except IntegrityError:
            raise ProtocolError(
                ErrorCode.NAME_TAKEN, f"{owner.name} already has a hosted bot named {body.name!r}"
            ) from None
        return bot_wire(Found(row, owner.name), [], owner_view=True)

    async def get(self, owner: str, name: str, viewer: Player | None) -> HostedBot:
        found = await self._find(owner, name)
        versions = await self._store.versions(found.row.id)
        return bot_wire(found, versions, owner_view=self._owns(found, viewer))

    async def page(
        self, owner: str | None, game: str | None, limit: int, offset: int, viewer: Player | None
    ) -> HostedBotList:
        found = await self._store.page(owner, game, limit, offset)
        versions = await self._store.versions_of([f.row.id for f in found])
        return HostedBotList(
            bots=tuple(
                bot_wire(f, versions[f.row.id], owner_view=self._owns(f, viewer)) for f in found
            )
        )

    async def update(
        self, owner: str, name: str, caller: Player, body: HostedBotUpdate
    ) -> HostedBot:
        """Change what the owner may: the version that plays (a ready one), the description,
        a pause lifted."""
        found = await self.owned(owner, name, caller)
        versions = await self._store.versions(found.row.id)
        if body.active is not None:
            chosen = next((v for v in versions if v.number == body.active), None)
            if chosen is None:
                raise ProtocolError(
                    ErrorCode.VALIDATION_ERROR,
                    f"{found.spec} has no version {body.active}",
                    {"active": body.active},
                )
            if chosen.status != "ready":
                raise ProtocolError(
                    ErrorCode.VALIDATION_ERROR,
                    f"version {body.active} of {found.spec} was refused and cannot play: "
                    f"{chosen.note[:300]}",
                    {"active": body.active},
                )
        await self._store.change(
            found.row.id, active=body.active, description=body.description, resume=body.resume
        )
        return await self.get(owner, name, caller)

    async def upload(
        self, owner: str, name: str, caller: Player, kind: str, uploads: Sequence[Upload]
    ) -> HostedBotVersion:
        """Check, store and try a new version of a bot (see the module); return it."""
        found = await self.owned(owner, name, caller)
        self._check_available()
        unpacked = await asyncio.to_thread(_checked, uploads, self._uploads)
        row = await self._add_version(found, kind, unpacked)
        return version_wire(found.spec, row, owner_view=True)

    async def adopt(
        self, owner: Player, name: str, game: str, files_: dict[str, bytes], description: str
    ) -> tuple[str, str | None]:
        """Host `files_` (a plug-in, as a course's agent submission is) as `owner`'s bot `name`
        (which starts with CLASS_PREFIX: players cannot make such bots) for a class tournament:
        the bot is made if it is missing, and the files become a version unless one with the
        same bytes exists already. Its failures are kept for its owner but never pause it.

        Return the version's seat spec and None, or its spec and why it was refused (it did not
        start in the sandbox). Not counted in the player's own quota of bots; the versions'
        bound holds (QUOTA_EXCEEDED). BAD_SUBMISSION for Python that does not compile.
        """
        if not name.startswith(CLASS_PREFIX):
            raise ValueError(f"a class tournament's bot is named {CLASS_PREFIX}...: {name!r}")
        self._check_available()
        found = await self._store.find(owner.name, name)
        if found is None:
            try:
                row = await self._store.add(owner.id, name, game, description)
            except IntegrityError:  # made meanwhile by another request
                row = None
            found = (
                await self._store.find(owner.name, name) if row is None else Found(row, owner.name)
            )
            assert found is not None
        if found.row.game != game:
            raise ProtocolError(
                ErrorCode.NAME_TAKEN,
                f"{owner.name} has a hosted bot named {name!r} for {found.row.game}, not {game}",
            )
        await asyncio.to_thread(files.check_python, files_)
        digest = files.digest(files_)
        kept = next(
            (v for v in await self._store.versions(found.row.id) if v.sha256 == digest), None
        )
        version = kept if kept is not None else await self._add_version(found, "plugin", files_)
        spec = str(found.spec.at(version.number))
        return spec, None if version.status == "ready" else version.note

    def _check_available(self) -> None:
        if not self.available():
            raise ProtocolError(
                ErrorCode.UNAVAILABLE,
                "hosted bots need the sandbox (bubblewrap and libseccomp), which this server "
                "cannot make",
            )

    async def _add_version(self, found: Found, kind: str, unpacked: dict[str, bytes]) -> VersionRow:
        """Write, try and store a new version of `found` from checked files."""
        entry = files.choose_entry(unpacked)
        async with self._versions_lock:
            number = await self._store.next_number(found.row.id)
            if number > self._settings.versions_per_bot:
                raise ProtocolError(
                    ErrorCode.QUOTA_EXCEEDED,
                    f"{found.spec} has {number - 1} versions, the most a bot may have",
                    {"max_versions": self._settings.versions_per_bot},
                )
            spec = found.spec.at(number)
            version = await asyncio.to_thread(
                files.write_version,
                self._root,
                spec,
                unpacked,
                kind=kind,
                entry=entry,
                game=found.row.game,
            )
            status, note = await asyncio.to_thread(self._try, version)
            row = VersionRow(
                bot_id=found.row.id,
                number=number,
                kind=kind,
                entry=entry,
                size=sum(len(data) for data in unpacked.values()),
                sha256=files.digest(unpacked),
                status=status,
                note=note[:2000],
            )
            await self._store.add_version(row, activate=status == "ready")
        return row

    def _try(self, version: VersionFiles) -> tuple[str, str]:
        """Start a version once in the sandbox: ("ready", its name) or ("refused", why)."""
        game = get_game(version.game)
        try:
            program = self._launch(version, game, self._limits)
        except EngineError as error:
            return "refused", str(error)
        try:
            return "ready", program.engine_name or "it answered the handshake"
        finally:
            program.close()

    async def failures(
        self, owner: str, name: str, caller: Player, limit: int
    ) -> HostedBotFailures:
        found = await self.owned(owner, name, caller)
        return await self._store.failures(found.row.id, limit)

    # The seats of matches.

    async def resolve(self, text: str, game: Game, *, live: bool = True) -> str:
        """Return the spec a seat stores for `text`: the version it names, or the active one.

        Raises ValueError in words a seat's refusal quotes: an unknown bot or version, another
        game's bot, a paused bot, a bot with no ready version, or no sandbox here; for a seat
        of a `live` match (not a worker's tournament game), a bot or a server at its cap of
        matches at once.
        """
        spec = parse_hosted(text)
        found = await self._store.find(spec.owner, spec.name)
        if found is None:
            raise HostedSpecError(f"{spec.owner} has no hosted bot named {spec.name!r}")
        if found.row.game != game.name:
            raise HostedSpecError(f"{found.spec} plays {found.row.game}, not {game.name}")
        if found.row.paused is not None:
            raise HostedSpecError(f"{found.spec} is paused: {found.row.paused}")
        if not self.available():
            raise HostedSpecError("this server cannot run hosted bots (no sandbox)")
        cap = self._settings.matches_per_bot
        if live and await self._store.playing(found.spec) >= cap:
            raise HostedSpecError(
                f"{found.spec} plays {cap} matches already, the most it may at once: try later"
            )
        if live and await self._store.running() >= self._settings.max_running:
            raise HostedSpecError(
                f"this server runs {self._settings.max_running} hosted bots' seats already, "
                "the most it may at once: try again when a match ends"
            )
        number = spec.version if spec.version is not None else found.row.active
        if number is None:
            raise HostedSpecError(f"{found.spec} has no version that plays yet")
        versions = await self._store.versions(found.row.id)
        chosen = next((v for v in versions if v.number == number), None)
        if chosen is None or chosen.status != "ready":
            raise HostedSpecError(f"{found.spec} has no version {number} that can play")
        return str(found.spec.at(number))

    def claims(self, spec: str) -> bool:
        """Whether `spec` names a hosted bot."""
        return is_hosted(spec)

    def build(self, text: str, game: Game) -> HostedPlayer:
        """Return the player of the version `text` names, from its files alone: it starts when
        it first moves (and fails then, as a crash does, when its files are gone)."""
        spec = parse_hosted(text)
        version = files.read_version(self._root, spec)

        def start() -> Program:
            if version is None or spec.version is None:
                raise EngineError(f"{spec}'s files are not on this server")
            return self._launch(version, game, self._limits)

        return HostedPlayer(spec, game, start)

    async def failed(self, text: str, match_id: str, words: str) -> None:
        """Keep how the version `text` failed in a match, for its owner (pausing it after too
        many in a row)."""
        spec = parse_hosted(text)
        found = await self._store.find(spec.owner, spec.name)
        if found is None or spec.version is None:
            return
        # A class tournament's bot plays its games out: its failures lose them, and pausing it
        # would stop the whole tournament at its next game.
        pause_after = (
            None if spec.name.startswith(CLASS_PREFIX) else self._settings.failures_to_pause
        )
        paused = await self._store.record_failure(
            found.row.id, spec.version, match_id, words, pause_after
        )
        if paused is not None:
            log.warning("hosted bot %s: %s", found.spec, paused)

    async def finished(self, text: str) -> None:
        """A match the version `text` played to its end without failing."""
        spec = parse_hosted(text)
        found = await self._store.find(spec.owner, spec.name)
        if found is not None:
            await self._store.record_success(found.row.id)

    async def _find(self, owner: str, name: str) -> Found:
        found = await self._store.find(owner, name)
        if found is None:
            raise _not_found(owner, name)
        return found

    async def owned(self, owner: str, name: str, caller: Player) -> Found:
        """Return the bot `owner` calls `name`: NOT_FOUND when there is none, FORBIDDEN unless
        `caller` owns it."""
        found = await self._find(owner, name)
        if not self._owns(found, caller):
            raise _not_owner(found)
        return found

    @staticmethod
    def _owns(found: Found, viewer: Player | None) -> bool:
        return viewer is not None and viewer.id == found.row.owner_id


def _checked(uploads: Sequence[Upload], limits: UploadLimits) -> dict[str, bytes]:
    unpacked = unpack(uploads, limits)
    files.check_python(unpacked)
    return unpacked
