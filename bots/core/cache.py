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

import hashlib
import importlib.metadata
import os
import sys
import tempfile
from pathlib import Path

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


def _marker(module_file: Path) -> Path:
    """Return the file that records the compiled state of `module_file` on this machine.

    It is keyed as numba keys its own cache (the source's path and contents, numba's version,
    the interpreter's), so a changed source or an upgrade asks for a new compilation.
    """
    digest = hashlib.sha256()
    digest.update(str(module_file.resolve()).encode())
    digest.update(module_file.read_bytes())
    digest.update(importlib.metadata.version("numba").encode())
    digest.update(sys.version.encode())
    directory = Path(os.environ.get(ENV_VAR) or default_cache_dir())
    return directory / "compiled" / f"{module_file.stem}-{digest.hexdigest()[:20]}"


def is_compiled(module_file: Path) -> bool:
    """True when the compiled module at `module_file` was loaded on this machine before, so
    importing it loads machine code from the cache rather than compiling."""
    return _marker(module_file).exists()


def mark_compiled(module_file: Path) -> None:
    """Record that `module_file` was compiled and cached (best effort: a failure only means a
    needless notice next time)."""
    marker = _marker(module_file)
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except OSError:
        pass
