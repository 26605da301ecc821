"""Where the compiled core keeps its machine code, and whether this machine has it yet.

numba compiles each function of the core at its first import and writes the result to a cache
directory; later imports load it in a fraction of a second. By default numba writes beside the
source file, which fails when the installed package is read-only (a system install, a Docker
layer, another user's venv). Arena points numba at a directory of the user's instead:
`$XDG_CACHE_HOME/arena/numba`, else `~/.cache/arena/numba`, else (neither writable) one in the
system's temporary directory. Setting `NUMBA_CACHE_DIR` overrides all of these.

This module never imports numba: commands that do not search must start without it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import os
import sys
import tempfile
from pathlib import Path
from typing import Final

ENV_VAR = "NUMBA_CACHE_DIR"
"""numba's own setting of its cache directory, which Arena sets unless it is set already."""


def default_cache_dir() -> Path:
    """Return the cache directory Arena prefers: under XDG_CACHE_HOME, else ~/.cache."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "arena" / "numba"


def _is_writable(path: Path) -> bool:
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            return True
    except OSError:
        return False


def configure_cache() -> Path:
    """Point numba's cache at a writable directory of the user's and return it.

    Respects `NUMBA_CACHE_DIR` when it is set. Must run before the compiled modules are
    imported; it also corrects numba's configuration if numba itself was imported earlier.
    """
    chosen = os.environ.get(ENV_VAR)
    if chosen:
        return Path(chosen)
    path = default_cache_dir()
    if not _is_writable(path):
        path = Path(tempfile.gettempdir()) / f"arena-numba-{os.getuid()}"
    os.environ[ENV_VAR] = str(path)
    numba = sys.modules.get("numba")
    if numba is not None:
        numba.config.CACHE_DIR = str(path)
    return path


CORE: Final = Path(__file__).parent
"""The directory of the core's source files."""

STAMP: Final = "arena-core.sha256"
"""The file, in numba's cache directory of the core, that names the core its entries came from."""


def core_digest(core: Path = CORE) -> str:
    """Return the hash of every source file of the core, with numba's version and Python's.

    numba checks a cached function against its own source file only. A compiled module calls
    helpers of others (bots.core.USES: `bits`, `search`, `checkers`, `connect4`) and its cached
    machine code holds their code as it was: a change to a helper's file alone would leave the
    functions of every module using it stale. Keyed by all the files, any change to the core
    makes a new key, and `refresh` then empties the cache of the whole core.
    """
    digest = hashlib.sha256()
    for source in sorted(core.glob("*.py")):
        digest.update(source.name.encode())
        digest.update(b"\0")
        digest.update(source.read_bytes())
        digest.update(b"\0")
    digest.update(importlib.metadata.version("numba").encode())
    digest.update(sys.version.encode())
    return digest.hexdigest()


def numba_directory(cache_dir: Path, core: Path = CORE) -> Path:
    """Return the directory where numba, given `cache_dir`, caches the functions of `core`'s files.

    numba names it after the source directory's absolute path (its `UserProvidedCacheLocator`:
    the directory's name, `_`, the SHA-1 of the path), so each installation has its own.
    """
    source = os.path.abspath(core)
    hashed = hashlib.sha1(source.encode()).hexdigest()
    return cache_dir / f"{os.path.basename(source)}_{hashed}"


def refresh(cache_dir: Path, core: Path = CORE) -> bool:
    """Empty numba's cache of the core unless it was compiled from these very files.

    Returns True when it emptied it (removing numba's index and data files, `*.nbi` and
    `*.nbc`, so that every function compiles anew) and records the core's digest beside them.
    Must run before the compiled modules are imported. Best effort: a file that cannot be
    removed or written is left as it is.
    """
    digest = core_digest(core)
    directory = numba_directory(cache_dir, core)
    stamp = directory / STAMP
    try:
        if stamp.read_text(encoding="ascii") == digest:
            return False
    except (OSError, UnicodeDecodeError):
        pass
    for cached in (*directory.glob("*.nbi"), *directory.glob("*.nbc")):
        with contextlib.suppress(OSError):
            cached.unlink()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest, encoding="ascii")
    except OSError:
        pass
    return True


def _marker(module: str, digest: str) -> Path:
    """Return the file that records that `module` of the core `digest` names was compiled here.

    It is keyed as the cache is (`core_digest`: every file of the core, numba's version, the
    interpreter's), so a changed core or an upgrade asks for a new compilation.
    """
    directory = Path(os.environ.get(ENV_VAR) or default_cache_dir())
    return directory / "compiled" / f"{module}-{digest[:20]}"


def is_compiled(module: str, digest: str) -> bool:
    """True when the compiled module `bots.core.MODULE` of the core `digest` names was loaded on
    this machine before, so importing it loads machine code from the cache rather than
    compiling."""
    return _marker(module, digest).exists()


def mark_compiled(module: str, digest: str) -> None:
    """Record that `bots.core.MODULE` of the core `digest` names was compiled and cached (best
    effort: a failure only means a needless notice next time)."""
    marker = _marker(module, digest)
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass
