"""Where the compiled core caches its machine code, and that a second run compiles nothing.

Each check runs in a fresh interpreter: numba reads its cache directory once, at import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from numba.core.caching import UserProvidedCacheLocator

from bots.core.cache import (
    CORE,
    STAMP,
    core_digest,
    is_compiled,
    mark_compiled,
    numba_directory,
    refresh,
)

PACKAGE = Path(__file__).resolve().parents[3] / "bots" / "core"

CONFIGURED = "from bots.core.cache import configure_cache; print(configure_cache())"

LOADED = """
import numba
from bots.core import load
load("checkers")
import bots.core.checkers as core
from games import get_game
start = get_game("checkers").initial_state()
print(core.perft(start, 6))
# What Python calls besides perft: the helpers compiled lazily come from the cache too.
core.legal_moves(start), core.play(start, start.legal_moves()[0])
core.count_moves(start.black, start.white, start.kings, start.turn)
dispatchers = [f for f in vars(core).values() if isinstance(f, numba.core.dispatcher.Dispatcher)]
print(numba.config.CACHE_DIR)
used = [f for f in dispatchers if f.signatures]
print(sum(sum(f.stats.cache_hits.values()) for f in used), len(used))
print(sum(sum(f.stats.cache_misses.values()) for f in dispatchers))
"""


def python(code: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
        env=env,
    )


def environment(**values: str) -> dict[str, str]:
    """This environment without numba's and XDG's cache settings, plus `values`."""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    return env | values


def test_the_cache_is_the_users_unless_numba_cache_dir_says_otherwise(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    assert python(CONFIGURED, environment(XDG_CACHE_HOME=str(xdg))).stdout.strip() == str(
        xdg / "arena" / "numba"
    )
    home = tmp_path / "home"
    assert python(CONFIGURED, environment(HOME=str(home))).stdout.strip() == str(
        home / ".cache" / "arena" / "numba"
    )
    chosen = tmp_path / "chosen"
    env = environment(XDG_CACHE_HOME=str(xdg), NUMBA_CACHE_DIR=str(chosen))
    assert python(CONFIGURED, env).stdout.strip() == str(chosen)
    # A cache home that cannot hold a directory: the temporary directory instead.
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    fallback = Path(python(CONFIGURED, environment(XDG_CACHE_HOME=str(blocked))).stdout.strip())
    assert fallback == Path(tempfile.gettempdir()) / f"arena-numba-{os.getuid()}"


def test_compiled_once_then_loaded_and_never_written_beside_the_package(tmp_path: Path) -> None:
    """A fresh cache compiles (announced by `arena perft`); the next run loads every function it
    uses from the cache and compiles none; neither writes into the package's directory (which
    may be read-only)."""
    beside = sorted(PACKAGE.rglob("*.nb[ic]"))
    env = environment(XDG_CACHE_HOME=str(tmp_path))
    arena = Path(sys.executable).with_name("arena")
    first = subprocess.run(
        [str(arena), "perft", "checkers", "10"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
        env=env,
    )
    assert first.stdout.startswith("perft(10) = 18,391,564 nodes")
    cache = tmp_path / "arena" / "numba"
    assert first.stderr.strip().startswith("Compiling the checkers core for this machine, once")
    assert str(cache) in first.stderr.replace("\n", "")
    assert list(cache.rglob("*.nbi")) and list(cache.rglob("*.nbc"))

    second = python(LOADED, env).stdout.split("\n")
    hits, functions = (int(n) for n in second[2].split())
    assert second[0] == "36768" and second[1] == str(cache)
    assert functions >= 3 and hits == functions and second[3] == "0"
    again = subprocess.run(
        [str(arena), "perft", "checkers", "10"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
        env=env,
    )
    assert (
        again.stdout.startswith("perft(10) = 18,391,564 nodes") and "Compiling" not in again.stderr
    )
    # The house engine's search compiles at its first checkers bot, announced on stderr.
    analyse = [str(arena), "analyse", "checkers", "--bot", "alphabeta:depth=4", "--json"]
    searched = subprocess.run(
        analyse, capture_output=True, text=True, check=True, timeout=600, env=env
    )
    assert searched.stderr.strip().startswith("Compiling the checkers_search core")
    assert json.loads(searched.stdout)["stats"]["nodes"] > 0
    quiet = subprocess.run(
        analyse, capture_output=True, text=True, check=True, timeout=600, env=env
    )
    assert quiet.stderr == ""
    assert json.loads(quiet.stdout)["pv"] == json.loads(searched.stdout)["pv"]
    assert sorted(PACKAGE.rglob("*.nb[ic]")) == beside == []
    assert (numba_directory(cache) / STAMP).read_text() == core_digest()


def test_numba_caches_the_core_where_refresh_looks(tmp_path: Path) -> None:
    expected = UserProvidedCacheLocator.get_suitable_cache_subpath(str(CORE / "search.py"))
    assert numba_directory(tmp_path) == tmp_path / expected


def _cached(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.glob("*.nb[ic]"))


def _fill(directory: Path) -> None:
    """Files as numba writes them for two functions of checkers_search."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("checkers_search._negamax-650", "checkers_search.search-700"):
        (directory / f"{name}.py311.nbi").write_bytes(b"index")
        (directory / f"{name}.py311.1.nbc").write_bytes(b"data")


def test_a_change_to_a_helper_file_empties_the_cache_of_the_whole_core(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """numba validates a cached function against its own file only: checkers_search's cached
    code keeps search.py's helpers as they were. Any file of the core changing must empty the
    cache of every module and ask for a new compilation."""
    core = tmp_path / "core"
    core.mkdir()
    for name in ("bits", "search", "checkers", "checkers_search"):
        (core / f"{name}.py").write_text(f"# {name}\n")
    cache = tmp_path / "cache"
    directory = numba_directory(cache, core)
    _fill(directory)
    assert refresh(cache, core)  # entries of unknown provenance: emptied once
    assert _cached(directory) == []
    _fill(directory)
    assert not refresh(cache, core)  # compiled from these files: kept
    assert len(_cached(directory)) == 4

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    before = core_digest(core)
    mark_compiled("checkers_search", before)
    assert is_compiled("checkers_search", before)

    (core / "search.py").write_text("# search, changed\n")  # a helper, not checkers_search.py
    after = core_digest(core)
    assert after != before
    assert not is_compiled("checkers_search", after)
    assert refresh(cache, core)
    assert _cached(directory) == []
    assert (directory / STAMP).read_text() == after
    # Another installation's core keeps its own cache.
    other = numba_directory(cache, tmp_path / "elsewhere" / "core")
    _fill(other)
    assert not refresh(cache, core)
    assert len(_cached(other)) == 4
