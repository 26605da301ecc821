"""The hosted bots' private directory: each version's files, and what it takes to run them.

`ROOT/OWNER/NAME/N/` holds `version.json` (kind, entry, game) and `files/`, the upload as it
is run; made mode 0700, so no sandbox's uid can read another bot's files. A match builds its
bot from here without the database (server.hosted.service.HostedBots.build).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

from sandbox import private_dir
from server.grading.uploads import bad_submission
from server.hosted.specs import HostedSpec

DEFAULT_ENTRY: Final = "bot.py"
META: Final = "version.json"


@dataclass(frozen=True, slots=True)
class VersionFiles:
    """Where a version's files are and how to run them."""

    directory: Path
    """The version's `files/` directory: the sandbox's working directory is a copy of it."""
    kind: str
    entry: str
    game: str


def version_dir(root: Path, spec: HostedSpec) -> Path:
    """The directory of the version `spec` names (which must name one)."""
    assert spec.version is not None
    return root / spec.owner / spec.name / str(spec.version)


def choose_entry(files: Mapping[str, bytes]) -> str:
    """Return the file a version runs: `bot.py`, else its only top-level `.py` file.

    Raises BAD_SUBMISSION when there is no such file, or several and no `bot.py`.
    """
    if DEFAULT_ENTRY in files:
        return DEFAULT_ENTRY
    top = sorted(name for name in files if "/" not in name and name.endswith(".py"))
    if len(top) == 1:
        return top[0]
    if not top:
        raise bad_submission(
            "the upload holds no Python file at its top level: send bot.py (or one .py file)"
        )
    raise bad_submission(
        f"the upload holds {len(top)} Python files at its top level and no bot.py: name the "
        "one to run bot.py",
        files=", ".join(top)[:200],
    )


def check_python(files: Mapping[str, bytes]) -> None:
    """Raise BAD_SUBMISSION naming the file and line of the first `.py` file that does not
    compile (it is compiled, never run, here)."""
    for name in sorted(files):
        if not name.endswith(".py"):
            continue
        try:
            source = files[name].decode("utf-8")
        except UnicodeDecodeError:
            raise bad_submission(f"{name} is not UTF-8 text", file=name[:100]) from None
        try:
            compile(source, name, "exec", dont_inherit=True)
        except SyntaxError as error:
            where = f"{name}, line {error.lineno}" if error.lineno else name
            raise bad_submission(
                f"{where}: {error.msg}", file=name[:100], line=error.lineno or 0
            ) from None
        except ValueError as error:  # a NUL byte in the source
            raise bad_submission(f"{name}: {error}", file=name[:100]) from None


def digest(files: Mapping[str, bytes]) -> str:
    """The SHA-256 of a version's files (names and contents, in name order)."""
    sha = hashlib.sha256()
    for name in sorted(files):
        sha.update(name.encode() + b"\0" + len(files[name]).to_bytes(8, "big") + files[name])
    return sha.hexdigest()


def write_version(
    root: Path, spec: HostedSpec, files: Mapping[str, bytes], *, kind: str, entry: str, game: str
) -> VersionFiles:
    """Write a version's files and its `version.json` (replacing a half-written earlier try)."""
    directory = version_dir(root, spec)
    if directory.exists():
        shutil.rmtree(directory)
    for parent in (root, root / spec.owner, root / spec.owner / spec.name, directory):
        private_dir(parent)
    target = private_dir(directory / "files")
    for name, data in files.items():
        relative = PurePosixPath(name)
        assert not relative.is_absolute() and ".." not in relative.parts
        path = target.joinpath(*relative.parts)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
    meta = {"kind": kind, "entry": entry, "game": game}
    (directory / META).write_text(json.dumps(meta), encoding="utf-8")
    return VersionFiles(target, kind, entry, game)


def read_version(root: Path, spec: HostedSpec) -> VersionFiles | None:
    """Return how to run the version `spec` names, or None when it has no files here."""
    directory = version_dir(root, spec)
    try:
        meta = json.loads((directory / META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return VersionFiles(directory / "files", meta["kind"], meta["entry"], meta["game"])
