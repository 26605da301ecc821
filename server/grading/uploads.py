"""A grading upload's intake: the uploaded files checked against the limits and unpacked.

An upload is plain files with flat names or a single `.zip`; its limits are the settings'
(`UploadLimits.of`): bytes and files, and for a zip the entries examined (ignored ones included)
and each entry's path, in folders and characters. Every refusal is a ProtocolError
BAD_SUBMISSION naming what is wrong, or SUBMISSION_TOO_LARGE. The work is CPU-bound (a zip's
central directory is read whole): callers run it off the event loop.
"""

from __future__ import annotations

import io
import re
import stat
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Final

from protocol.errors import ErrorCode, ProtocolError
from server.settings import Settings

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,99}$")
_IGNORED_PARTS: Final = frozenset({"__MACOSX", "__pycache__", ".DS_Store"})


@dataclass(frozen=True)
class UploadLimits:
    """What one upload may hold: bytes (unzipped) and files in all; for a zip, the entries
    examined (folders and skipped litter included), and the characters of an entry's path and
    the folders it lies in."""

    max_bytes: int
    max_files: int
    max_zip_entries: int
    max_path_depth: int
    max_path_chars: int

    @classmethod
    def of(cls, settings: Settings) -> UploadLimits:
        """Return the limits `settings` set."""
        return cls(
            max_bytes=settings.grader.max_upload_bytes,
            max_files=settings.grader.max_files,
            max_zip_entries=settings.grader.max_zip_entries,
            max_path_depth=settings.grader.max_path_depth,
            max_path_chars=settings.grader.max_path_chars,
        )


@dataclass(frozen=True)
class Upload:
    """One uploaded file: the name the client gave and its bytes."""

    name: str
    data: bytes


def bad_submission(message: str, **details: str | int) -> ProtocolError:
    """Return the BAD_SUBMISSION refusal saying `message`, with `details` for the client."""
    return ProtocolError(ErrorCode.BAD_SUBMISSION, message, details)


def unpack(uploads: Sequence[Upload], limits: UploadLimits) -> dict[str, bytes]:
    """Return the submission's files (relative POSIX path -> bytes) from the uploaded files.

    Either plain files (flat names: letters, digits, `_`, `.`, `-`) or a single `.zip`, whose
    entries may sit in folders; a zip whose files all sit in one top folder is unwrapped, and
    macOS/`__pycache__` litter is skipped. Raises ProtocolError BAD_SUBMISSION naming what is
    wrong, or SUBMISSION_TOO_LARGE.
    """
    if not uploads:
        raise bad_submission("no file uploaded: send the program as the multipart field `files`")
    if len(uploads) == 1 and uploads[0].name.lower().endswith(".zip"):
        files = _unzip(uploads[0], limits)
    else:
        files = {}
        for upload in uploads:
            if upload.name.lower().endswith(".zip"):
                raise bad_submission(
                    f"{upload.name!r} is a zip uploaded with other files: upload either one "
                    "zip or plain files",
                    file=upload.name[:100],
                )
            if not _NAME.fullmatch(upload.name):
                raise bad_submission(
                    f"file name {upload.name[:100]!r} is not a plain name (letters, digits, "
                    "`_`, `.`, `-`; no folders)",
                    file=upload.name[:100],
                )
            if upload.name in files:
                raise bad_submission(f"{upload.name!r} is uploaded twice", file=upload.name)
            files[upload.name] = upload.data
    if len(files) > limits.max_files:
        raise bad_submission(
            f"the upload holds {len(files)} files; at most {limits.max_files} are accepted"
        )
    total = sum(len(data) for data in files.values())
    if total > limits.max_bytes:
        raise _too_large(total, limits.max_bytes)
    return files


def _too_large(size: int, max_bytes: int) -> ProtocolError:
    return ProtocolError(
        ErrorCode.SUBMISSION_TOO_LARGE,
        f"the submission is {size} bytes; at most {max_bytes} are accepted",
        {"max_bytes": max_bytes},
    )


def _unzip(upload: Upload, limits: UploadLimits) -> dict[str, bytes]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(upload.data))
    except (zipfile.BadZipFile, ValueError) as error:
        raise bad_submission(f"{upload.name!r} is not a readable zip file: {error}") from None
    files: dict[str, bytes] = {}
    folders: set[str] = set()
    total = 0
    with archive:
        # Every entry costs a look, a skipped one too: count them all before looking at any.
        entries = archive.infolist()
        if len(entries) > limits.max_zip_entries:
            raise bad_submission(
                f"the zip holds {len(entries)} entries (folders and skipped files included); "
                f"at most {limits.max_zip_entries} are accepted",
                max_zip_entries=limits.max_zip_entries,
            )
        for info in entries:
            if info.is_dir():
                continue
            path = PurePosixPath(info.filename)
            if any(part in _IGNORED_PARTS or part.startswith("._") for part in path.parts):
                continue
            if (
                path.is_absolute()
                or not path.parts
                or not all(_NAME.fullmatch(part) for part in path.parts)
            ):
                raise bad_submission(
                    f"zip entry {info.filename[:100]!r} is not a relative path of plain names",
                    file=info.filename[:100],
                )
            _check_path(info.filename, path, limits)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise bad_submission(f"zip entry {info.filename[:100]!r} is a symbolic link")
            if len(files) >= limits.max_files:
                raise bad_submission(f"the zip holds more than {limits.max_files} files")
            name = path.as_posix()
            parents = {parent.as_posix() for parent in path.parents if parent.parts}
            clash = name if name in folders else next((p for p in parents if p in files), None)
            if clash is not None:
                raise bad_submission(
                    f"zip entry {info.filename[:100]!r} clashes with {clash[:100]!r}: one name "
                    "cannot be both a file and a folder",
                    file=info.filename[:100],
                )
            try:
                with archive.open(info) as entry:
                    # The header's size may lie: read no more than what is still allowed.
                    data = entry.read(limits.max_bytes - total + 1)
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError) as error:
                raise bad_submission(
                    f"cannot read {info.filename[:100]!r} from the zip: {error}"
                ) from None
            total += len(data)
            if total > limits.max_bytes:
                raise _too_large(total, limits.max_bytes)
            files[name] = data
            folders |= parents
    tops = {PurePosixPath(name).parts[0] for name in files}
    if len(tops) == 1 and all(len(PurePosixPath(name).parts) > 1 for name in files):
        top = tops.pop()
        files = {name[len(top) + 1 :]: data for name, data in files.items()}
    return files


def _check_path(filename: str, path: PurePosixPath, limits: UploadLimits) -> None:
    """Refuse a zip entry to be written whose path is longer or deeper than the limits (the
    file system's own limits would fail it half way)."""
    if len(filename) > limits.max_path_chars:
        raise bad_submission(
            f"zip entry {filename[:100]!r} has a path of {len(filename)} characters; at most "
            f"{limits.max_path_chars} are accepted",
            file=filename[:100],
            max_path_chars=limits.max_path_chars,
        )
    if len(path.parts) - 1 > limits.max_path_depth:
        raise bad_submission(
            f"zip entry {filename[:100]!r} lies {len(path.parts) - 1} folders deep; at most "
            f"{limits.max_path_depth} are accepted",
            file=filename[:100],
            max_path_depth=limits.max_path_depth,
        )
