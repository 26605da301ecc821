"""A grading upload's intake: the uploaded files checked against the limits and unpacked.

An upload is plain files with flat names or a single `.zip`; its limits (bytes and files) are
the settings' `grader_max_upload_bytes` and `grader_max_files`. Every refusal is a ProtocolError
BAD_SUBMISSION naming what is wrong, or SUBMISSION_TOO_LARGE.
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

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,99}$")
_IGNORED_PARTS: Final = frozenset({"__MACOSX", "__pycache__", ".DS_Store"})


@dataclass(frozen=True)
class Upload:
    """One uploaded file: the name the client gave and its bytes."""

    name: str
    data: bytes


def bad_submission(message: str, **details: str | int) -> ProtocolError:
    """Return the BAD_SUBMISSION refusal saying `message`, with `details` for the client."""
    return ProtocolError(ErrorCode.BAD_SUBMISSION, message, details)


def unpack(uploads: Sequence[Upload], *, max_bytes: int, max_files: int) -> dict[str, bytes]:
    """Return the submission's files (relative POSIX path -> bytes) from the uploaded files.

    Either plain files (flat names: letters, digits, `_`, `.`, `-`) or a single `.zip`, whose
    entries may sit in folders; a zip whose files all sit in one top folder is unwrapped, and
    macOS/`__pycache__` litter is skipped. Raises ProtocolError BAD_SUBMISSION naming what is
    wrong, or SUBMISSION_TOO_LARGE.
    """
    if not uploads:
        raise bad_submission("no file uploaded: send the program as the multipart field `files`")
    if len(uploads) == 1 and uploads[0].name.lower().endswith(".zip"):
        files = _unzip(uploads[0], max_bytes=max_bytes, max_files=max_files)
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
    if len(files) > max_files:
        raise bad_submission(
            f"the upload holds {len(files)} files; at most {max_files} are accepted"
        )
    total = sum(len(data) for data in files.values())
    if total > max_bytes:
        raise _too_large(total, max_bytes)
    return files


def _too_large(size: int, max_bytes: int) -> ProtocolError:
    return ProtocolError(
        ErrorCode.SUBMISSION_TOO_LARGE,
        f"the submission is {size} bytes; at most {max_bytes} are accepted",
        {"max_bytes": max_bytes},
    )


def _unzip(upload: Upload, *, max_bytes: int, max_files: int) -> dict[str, bytes]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(upload.data))
    except (zipfile.BadZipFile, ValueError) as error:
        raise bad_submission(f"{upload.name!r} is not a readable zip file: {error}") from None
    files: dict[str, bytes] = {}
    total = 0
    with archive:
        entries = [info for info in archive.infolist() if not info.is_dir()]
        for info in entries:
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
            if stat.S_ISLNK(info.external_attr >> 16):
                raise bad_submission(f"zip entry {info.filename[:100]!r} is a symbolic link")
            if len(files) >= max_files:
                raise bad_submission(f"the zip holds more than {max_files} files")
            try:
                with archive.open(info) as entry:
                    # The header's size may lie: read no more than what is still allowed.
                    data = entry.read(max_bytes - total + 1)
            except (zipfile.BadZipFile, OSError, RuntimeError, NotImplementedError) as error:
                raise bad_submission(
                    f"cannot read {info.filename[:100]!r} from the zip: {error}"
                ) from None
            total += len(data)
            if total > max_bytes:
                raise _too_large(total, max_bytes)
            files[path.as_posix()] = data
    tops = {PurePosixPath(name).parts[0] for name in files}
    if len(tops) == 1 and all(len(PurePosixPath(name).parts) > 1 for name in files):
        top = tops.pop()
        files = {name[len(top) + 1 :]: data for name, data in files.items()}
    return files
