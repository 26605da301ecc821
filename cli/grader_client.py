"""`arena grader submit`: upload a submission to a hosted autograder and wait for its grade."""

from __future__ import annotations

import io
import json
import time
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from cli.common import fail

if TYPE_CHECKING:
    import httpx

console = Console(highlight=False, stderr=True)

_SKIPPED = frozenset({"__pycache__", "__MACOSX", ".git", ".venv", ".DS_Store"})


def _zip_folder(folder: Path) -> tuple[str, bytes]:
    """Return the folder's files as one zip (names relative to it; caches and dotfiles left out)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if any(part in _SKIPPED or part.startswith(".") for part in relative.parts):
                continue
            if path.is_file() and not path.is_symlink():
                archive.write(path, relative.as_posix())
    return f"{folder.name or 'submission'}.zip", buffer.getvalue()


def _files_of(paths: list[Path]) -> list[tuple[str, bytes]]:
    if len(paths) == 1 and paths[0].is_dir():
        return [_zip_folder(paths[0])]
    files = []
    for path in paths:
        if path.is_dir():
            fail(f"{path} is a folder: give one folder, or files only")
        try:
            files.append((path.name, path.read_bytes()))
        except OSError as error:
            fail(f"cannot read {path}: {error.strerror}")
    return files


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
        return f"{body['code']}: {body['message']}"
    except (ValueError, KeyError, TypeError):
        return f"HTTP {response.status_code}: {response.text[:200]}"


def submit_command(
    paths: Annotated[
        list[Path],
        typer.Argument(help="The program and its modules, one folder, or one .zip."),
    ],
    profile: Annotated[
        str, typer.Option("--profile", help="The assignment profile: endgame or agent.")
    ] = "endgame",
    server: Annotated[
        str, typer.Option("--server", help="The Arena server's base URL.")
    ] = "http://127.0.0.1:8000",
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="ARENA_TOKEN",
            help="Your player's API token (from POST /players): the server needs it to accept "
            "the upload, and only it reads the job.",
        ),
    ] = None,
    wait: Annotated[
        bool, typer.Option("--wait/--no-wait", help="Wait for the grade, or print the job id.")
    ] = True,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print results.json to stdout instead of a table.")
    ] = False,
    results: Annotated[
        Path | None, typer.Option("--results", help="Write results.json (Gradescope) here.")
    ] = None,
    html: Annotated[Path | None, typer.Option("--html", help="Write the HTML report here.")] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for the grade.")
    ] = 3600.0,
) -> None:
    """Upload a submission to a hosted autograder, wait for it to be graded, show the grade.

    Uploads as the player whose token is given (--token or ARENA_TOKEN). Exits 0 once the
    submission is graded (whatever the score), 1 if the grader failed or the wait timed out, 2
    for a usage error or a refused upload.
    """
    import httpx

    from cli.grade_report import print_report
    from grader.html import html_report
    from grader.results import GradeReport

    files = _files_of(paths)
    base = server.rstrip("/")
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    try:
        with httpx.Client(base_url=base, timeout=60.0, headers=headers) as client:
            response = client.post(
                "/grader/jobs",
                data={"profile": profile},
                files=[("files", (name, data)) for name, data in files],
            )
            if response.status_code == 401 and token is None:
                fail(
                    f"the server refused the upload: {_error_text(response)}; pass your "
                    "player's token with --token TOKEN (or ARENA_TOKEN)"
                )
            if response.status_code != 202:
                fail(f"the server refused the upload: {_error_text(response)}")
            job: dict[str, Any] = response.json()
            console.print(f"job {job['job_id']} queued")
            if not wait:
                print(job["job_id"])
                return
            job = _wait(client, job, timeout)
            results_data = client.get(job["results_url"]).json()
    except httpx.HTTPError as error:
        fail(f"cannot reach {base}: {error}")
    report = GradeReport.from_json(results_data, profile)
    try:
        if results is not None:
            results.write_text(json.dumps(results_data, indent=2) + "\n", encoding="utf-8")
        if html is not None:
            html.write_text(html_report(report), encoding="utf-8")
    except OSError as error:
        fail(f"cannot write {error.filename}: {error.strerror}")
    if as_json:
        print(json.dumps(results_data, indent=2))
    else:
        print_report(report)
    if job["status"] == "error":
        raise typer.Exit(1)


def _wait(client: httpx.Client, job: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Poll the job until it is done or failed, showing its place in the queue."""
    deadline = time.monotonic() + timeout
    started = time.monotonic()
    with console.status("waiting") as status:
        while job["status"] in ("queued", "running"):
            if time.monotonic() > deadline:
                console.print(f"still {job['status']} after {timeout:g} s; its id: {job['job_id']}")
                raise typer.Exit(1)
            if job["status"] == "queued":
                status.update(f"queued, position {job.get('queue_position') or '?'}")
            else:
                status.update(f"being graded ({time.monotonic() - started:.0f} s)")
            time.sleep(1.0)
            response = client.get(f"/grader/jobs/{job['job_id']}")
            if response.status_code != 200:
                fail(f"cannot follow the job: {_error_text(response)}")
            job = response.json()
    console.print(escape(f"{job['status']}: {job.get('summary') or ''}"))
    return job
