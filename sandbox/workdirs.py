"""Where the grader stages a run's files: one directory per user, swept of dead processes' runs.

Every working directory (the sandbox's staging copy, the endgame grader's copy of a
submission with a puzzle's input) is made by `new_workdir` under `runs_dir()`, named after
the process that made it and that process's start time. Its maker removes it; a process
killed outright (SIGKILL, a crash) cannot, and `sweep_runs` removes its directories later,
at the next start of whatever grades.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

RUN_PREFIX = "arena-run-"
"""Each directory is `runs_dir()/arena-run-PID.START-XXXX`: its process, and when it started."""
_RUN_NAME = re.compile(rf"{RUN_PREFIX}(\d+)\.(\d+)-")


def runs_dir() -> Path:
    """Return the one directory holding this user's working directories, made if need be.

    It is `arena-runs-UID` in the temporary directory: mode 0700 (0711 as root, so the
    sandbox uids can reach a program copied there, never a run's files), owned by us.
    Raises PermissionError when something else is found at that path: it is not used.
    """
    base = _runs_base()
    mode = 0o711 if os.geteuid() == 0 else 0o700
    with contextlib.suppress(FileExistsError):
        base.mkdir(mode=mode)
    if not _is_ours(base):
        raise PermissionError(f"{base} is not a directory of this user's: remove it")
    if stat.S_IMODE(base.lstat().st_mode) != mode:
        base.chmod(mode)
    return base


def new_workdir(suffix: str = "") -> Path:
    """Create a fresh directory (mode 0700) under `runs_dir()` for this process.

    The caller removes it; if the process is killed first, `sweep_runs` removes it later.
    """
    prefix = f"{RUN_PREFIX}{os.getpid()}.{_start_ticks(os.getpid())}-"
    return Path(tempfile.mkdtemp(prefix=prefix, suffix=suffix, dir=runs_dir()))


def sweep_runs() -> int:
    """Remove the working directories whose process is gone; return how many.

    Call it at start-up, before grading: the directories of a live process are kept.
    """
    base = _runs_base()
    if not _is_ours(base):
        return 0
    removed = 0
    for entry in base.iterdir():
        match = _RUN_NAME.match(entry.name)
        if match is None or _start_ticks(int(match[1])) == int(match[2]):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed += 1
    return removed


def _runs_base() -> Path:
    return Path(tempfile.gettempdir()) / f"arena-runs-{os.geteuid()}"


def _is_ours(path: Path) -> bool:
    try:
        info = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()


def _start_ticks(pid: int) -> int | None:
    """Return when process `pid` started (clock ticks after boot), None if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return None
    # After the command name: state is field 3 of stat(5); starttime is field 22.
    return int(fields[19])
