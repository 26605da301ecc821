"""The endgame database on disk: one file per signature, a manifest, building with resume.

A database directory holds `NAME.u8` (one byte per position of signature NAME, in index
order: see bots.egdb.solve for the values) and `manifest.json`, which records for each
finished signature its number of positions, the SHA-256 of its file, its largest distance,
its counts of wins, losses and draws, and the seconds it took. A signature is finished only
once its file is complete and listed in the manifest, so an interrupted build resumes at the
first signature not listed (files are written to a temporary name and renamed).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from bots.egdb import DatabaseError
from bots.egdb.index import Signature, count, signatures_up_to
from bots.egdb.solve import solve_pair

FORMAT: Final = "arena-egdb"
VERSION: Final = 1
MANIFEST: Final = "manifest.json"
MAX_BUILD_PIECES: Final = 6
"""The most pieces `build` accepts (6 pieces would take days and ~2.5 GB of disk)."""


@dataclass(slots=True)
class SignatureInfo:
    """What the manifest records about one finished signature."""

    positions: int
    sha256: str
    max_plies: int
    wins: int
    losses: int
    draws: int
    seconds: float

    def as_json(self) -> dict[str, Any]:
        """Return the manifest entry."""
        return {
            "positions": self.positions,
            "sha256": self.sha256,
            "max_plies": self.max_plies,
            "wins": self.wins,
            "losses": self.losses,
            "draws": self.draws,
            "seconds": round(self.seconds, 3),
        }


@dataclass(slots=True)
class Manifest:
    """The finished signatures of a database directory."""

    signatures: dict[Signature, SignatureInfo] = field(default_factory=dict)

    @property
    def pieces(self) -> int:
        """The largest N such that every signature of up to N pieces is finished."""
        n = 0
        while all(s in self.signatures for s in signatures_up_to(n + 1)):
            n += 1
        return n


def read_manifest(directory: Path) -> Manifest:
    """Return the manifest of `directory` (empty if there is none yet)."""
    path = directory / MANIFEST
    if not path.exists():
        return Manifest()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT or data.get("version") != VERSION:
            raise DatabaseError(f"{path} is not an {FORMAT} version {VERSION} manifest")
        entries = {
            Signature.parse(name): SignatureInfo(**entry)
            for name, entry in data["signatures"].items()
        }
    except (ValueError, KeyError, TypeError) as exc:
        raise DatabaseError(f"{path} is damaged: {exc}") from None
    return Manifest(entries)


def _write_manifest(directory: Path, manifest: Manifest) -> None:
    data = {
        "format": FORMAT,
        "version": VERSION,
        "signatures": {s.name: info.as_json() for s, info in sorted(manifest.signatures.items())},
    }
    temporary = directory / (MANIFEST + ".tmp")
    temporary.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    os.replace(temporary, directory / MANIFEST)


def table_path(directory: Path, sig: Signature) -> Path:
    """Return the file of one signature's table."""
    return directory / f"{sig.name}.u8"


def load_table(directory: Path, sig: Signature, info: SignatureInfo) -> npt.NDArray[np.uint8]:
    """Read one table (memory-mapped); DatabaseError if its size is not the manifest's."""
    path = table_path(directory, sig)
    try:
        size = path.stat().st_size
    except OSError:
        raise DatabaseError(f"{path} is missing; rebuild with `arena egdb build`") from None
    if size != info.positions:
        raise DatabaseError(f"{path} has {size} bytes, expected {info.positions}")
    if size == 0:
        return np.zeros(0, dtype=np.uint8)
    return np.memmap(path, dtype=np.uint8, mode="r")


def verify(directory: Path) -> list[str]:
    """Return the names of finished signatures whose file's checksum differs (damaged)."""
    return sorted(name for name, ok in check_tables(directory).items() if not ok)


def check_tables(directory: Path) -> dict[str, bool]:
    """Return, for each finished signature by name, whether its file exists and its SHA-256 is
    the manifest's (False: damaged or missing)."""
    manifest = read_manifest(directory)
    checked = {}
    for sig, info in sorted(manifest.signatures.items()):
        path = table_path(directory, sig)
        checked[sig.name] = path.exists() and _sha256(path) == info.sha256
    return checked


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class BuildEvent:
    """Progress of a build: `kind` is "start", "layer", "done" or "kept" (already finished).

    `done` and `total` count positions of the whole build; `layer` and `left` (for "layer")
    are the distance just decided and the positions of the pair still undecided.
    """

    kind: str
    signature: Signature
    done: int
    total: int
    layer: int = 0
    left: int = 0
    seconds: float = 0.0


def build(
    directory: Path,
    pieces: int,
    *,
    progress: Callable[[BuildEvent], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> Manifest:
    """Build (or finish building) every signature of 1 to `pieces` pieces into `directory`.

    Signatures already in the manifest are kept. Raises ValueError for a piece count outside
    1..MAX_BUILD_PIECES and DatabaseError if the directory holds something else.
    """
    if not 1 <= pieces <= MAX_BUILD_PIECES:
        raise ValueError(f"pieces must be 1 to {MAX_BUILD_PIECES}, not {pieces}")
    directory.mkdir(parents=True, exist_ok=True)
    manifest = read_manifest(directory)
    order = signatures_up_to(pieces)
    total = sum(count(s) for s in order)
    done = 0
    tables: dict[Signature, npt.NDArray[np.uint8]] = {}

    def emit(event: BuildEvent) -> None:
        if progress is not None:
            progress(event)

    for sig in order:
        if sig in tables:
            continue
        pair = [sig] if sig.flipped() == sig else [sig, sig.flipped()]
        if all(s in manifest.signatures for s in pair):
            for s in pair:
                tables[s] = load_table(directory, s, manifest.signatures[s])
                done += count(s)
                emit(BuildEvent("kept", s, done, total))
            continue
        emit(BuildEvent("start", sig, done, total))
        start = clock()

        def layer(
            t: int, left: int, sig: Signature = sig, done: int = done, start: float = start
        ) -> None:
            emit(BuildEvent("layer", sig, done, total, t, left, clock() - start))

        solved = solve_pair(sig, tables, layer=layer)
        seconds = clock() - start
        share = sum(count(s) for s in pair)
        for s in pair:
            table = solved[s]
            path = table_path(directory, s)
            temporary = path.with_suffix(".tmp")
            table.tofile(temporary)
            os.replace(temporary, path)
            manifest.signatures[s] = _info(table, _sha256(path), seconds * count(s) / share)
            _write_manifest(directory, manifest)
            tables[s] = table
            done += count(s)
            emit(BuildEvent("done", s, done, total, seconds=seconds * count(s) / share))
    return manifest


def _info(table: npt.NDArray[np.uint8], digest: str, seconds: float) -> SignatureInfo:
    values = table.astype(np.int64)
    return SignatureInfo(
        positions=len(table),
        sha256=digest,
        max_plies=int(values.max() - 1) if len(values) and values.max() else 0,
        wins=int(((values > 0) & (values % 2 == 0)).sum()),
        losses=int((values % 2 == 1).sum()),
        draws=int((values == 0).sum()),
        seconds=seconds,
    )
