"""The compiled search core: the hot loops of the checkers search, compiled by numba.

The code is plain Python over integers and one preallocated numpy buffer, compiled to machine
code at its first import on a machine and cached on disk (bots.core.cache says where). The
lectures' searches stay plain Python; the core is for what must be fast (perft, and the house
engine's search in time).

Importing this package imports nothing heavy and changes nothing. `load` imports a compiled
module: it first points numba's cache at the user's cache directory (bots.core.cache), empties
that cache of the core when any file of the core changed since it was written (numba checks
each function against its own file only), and announces the compilation when this machine has
not compiled the module yet.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from bots.core.cache import configure_cache, core_digest, is_compiled, mark_compiled, refresh

MODULES = ("checkers", "checkers_search", "connect4", "connect4_search")
"""The compiled modules of the core, each `bots.core.NAME`."""

USES = {
    "checkers": ("bits",),
    "checkers_search": ("bits", "checkers", "search"),
    "connect4": ("bits",),
    "connect4_search": ("bits", "connect4", "search"),
}
"""The compiled modules each module imports (and so compiles with it on a fresh machine)."""


def load(name: str, announce: Callable[[str], object] | None = None) -> None:
    """Import the compiled module `bots.core.NAME`, compiling it if this machine has not.

    `announce` receives one line before a compilation (of the module or of a module it uses;
    tens of seconds once per machine and per version); loading from the cache is announced to
    no one.
    """
    if name not in MODULES:
        raise ValueError(f"no compiled module {name!r}; there are: {', '.join(MODULES)}")
    directory = configure_cache()
    digest = core_digest()
    modules = (*USES.get(name, ()), name)
    if announce is not None and not all(is_compiled(module, digest) for module in modules):
        announce(
            f"Compiling the {name} core for this machine, once (under a minute; "
            f"cached in {directory})..."
        )
    refresh(directory)
    importlib.import_module(f"bots.core.{name}")
    for module in modules:
        mark_compiled(module, digest)
