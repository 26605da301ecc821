"""`arena grader submit`: upload a submission to a hosted autograder and wait for its grade."""

from __future__ import annotations

import io
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from cli.common import fail
from cli.rest import DEFAULT_SERVER, Api, ServerOpt, connect

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


@dataclass(frozen=True)
class _Upload:
    """Where an upload goes, and how its job is followed to its results."""

    path: str
    form: dict[str, str]
    profile: str
    id_key: str
    follow: str
    """The status path, `{id}` standing for the new job's id (a Location header wins)."""
    noun: str = "job"


def submit_command(
    paths: Annotated[
        list[Path],
        typer.Argument(help="The program and its modules, one folder, or one .zip."),
    ],
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile",
            help="The assignment profile: endgame (the default) or agent; a course assignment "
            "has its own.",
        ),
    ] = None,
    course: Annotated[
        str | None,
        typer.Option("--course", help="Submit to a course assignment: the course's id or name."),
    ] = None,
    assignment: Annotated[
        str | None,
        typer.Option("--assignment", help="The course assignment: its id or name (--course)."),
    ] = None,
    server: ServerOpt = DEFAULT_SERVER,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="ARENA_TOKEN",
            help="Your token (or ARENA_TOKEN): a player's API token from POST /players, or for "
            "a course the invite token of your link (.../join/TOKEN). Only it reads the job.",
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

    Uploads as the player whose token is given (--token or ARENA_TOKEN). With --course and
    --assignment the upload is a submission to that course assignment, under its deadline and
    daily limit, and the grade shown is what the course lets you see now. Exits 0 once the
    submission is graded (whatever the score), 1 if the grader failed or the wait timed out, 2
    for a usage error or a refused upload (the server's code and message are printed).
    """
    from autograder.results import GradeReport
    from cli.grade_report import show_results

    if (course is None) != (assignment is None):
        fail("--course and --assignment go together: the course, and the assignment in it")
    files = _files_of(paths)
    with connect(server, token) as api:
        upload = (
            _Upload(
                "/grader/jobs",
                {"profile": profile or "endgame"},
                profile or "endgame",
                "job_id",
                "/grader/jobs/{id}",
            )
            if course is None or assignment is None
            else _course_upload(api, course, assignment, profile)
        )
        response = api.request(
            "POST",
            upload.path,
            data=upload.form,
            files=[("files", (name, data)) for name, data in files],
            doing="take the upload",
            expect=202,
        )
        job: dict[str, Any] = response.json()
        ident = str(job[upload.id_key])
        console.print(escape(f"{upload.noun} {ident} queued"))
        if not wait:
            print(ident)
            return
        follow = response.headers.get("Location") or upload.follow.format(id=ident)
        job = _wait(api, follow, job, ident, timeout)
        results_data = api.call("GET", job["results_url"], doing="show the results")
    report = GradeReport.from_json(results_data, upload.profile)
    show_results(report, results_data, results=results, html=html, as_json=as_json)
    if course is not None:
        _course_notes(job)
    if job["status"] == "error":
        raise typer.Exit(1)


def _course_upload(api: Api, course_ref: str, assignment_ref: str, profile: str | None) -> _Upload:
    """Return the upload to a course assignment, found by id or name with the caller's token."""
    from cli.course.common import find_assignment, find_course

    course = find_course(api, course_ref)
    assignment = find_assignment(api, course, assignment_ref)
    if profile is not None and profile != assignment.profile:
        fail(
            f"{assignment.name} is an assignment of the {assignment.profile} profile, not "
            f"{profile}: leave out --profile"
        )
    path = f"/courses/{course.course_id}/assignments/{assignment.assignment_id}/submissions"
    follow = f"/courses/{course.course_id}/submissions/{{id}}"
    return _Upload(path, {}, assignment.profile, "submission_id", follow, "submission")


def _course_notes(submission: dict[str, Any]) -> None:
    """Say what the late policy did to the grade (the server's summary says what is hidden)."""
    if submission.get("late") and submission.get("final_score") is not None:
        console.print(
            escape(
                f"submitted {submission['days_late']} day(s) late: counted "
                f"{submission['final_score']:g} of {submission['max_score']:g} after the late "
                "penalty"
            ),
            soft_wrap=True,
        )


def _wait(api: Api, path: str, job: dict[str, Any], ident: str, timeout: float) -> dict[str, Any]:
    """Poll the job at `path` until it is done or failed, showing its place in the queue."""
    deadline = time.monotonic() + timeout
    started = time.monotonic()
    with console.status("waiting") as status:
        while job["status"] in ("queued", "running"):
            if time.monotonic() > deadline:
                console.print(escape(f"still {job['status']} after {timeout:g} s; its id: {ident}"))
                raise typer.Exit(1)
            if job["status"] == "queued":
                wait = job.get("wait") or {}
                why = f": {wait['reason']}" if wait.get("reason") else ""
                status.update(escape(f"queued, position {job.get('queue_position') or '?'}{why}"))
            else:
                status.update(f"being graded ({time.monotonic() - started:.0f} s)")
            time.sleep(1.0)
            job = api.call("GET", path, doing="let the job be followed")
    console.print(escape(f"{job['status']}: {job.get('summary') or ''}"))
    return job
