"""The autograder commands: `arena grade` and the `arena grader` group (`make-puzzles` is
cli/grader_puzzles.py's, `submit` cli/grader_client.py's)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from autograder.profiles import DEFAULT_PYTHON, PROFILES
from cli.common import fail
from cli.grader_client import submit_command
from cli.grader_puzzles import make_puzzles_command

if TYPE_CHECKING:
    pass

console = Console(highlight=False)

PUBLIC_SUITES = {"endgame": "endgame-puzzles.json", "agent": "agent-suite.json"}
"""Each profile's public example suite, in autograder/examples/: `arena grade`'s default."""


def public_suite(profile: str) -> Path:
    """Return the path of `profile`'s public example suite, shipped in the package."""
    from importlib.resources import files

    return Path(str(files("autograder").joinpath("examples", PUBLIC_SUITES[profile])))


def register(app: typer.Typer) -> None:
    """Add `arena grade` and the `arena grader` command group to `app`."""
    app.command("grade")(grade_command)
    group = typer.Typer(
        name="grader",
        help="Autograder tools: make test suites, submit to a hosted grader (docs/GRADER.md).",
        no_args_is_help=True,
    )
    group.command("starter")(starter_command)
    group.command("make-puzzles")(make_puzzles_command)
    group.command("submit")(submit_command)
    app.add_typer(group, name="grader")


def grade_command(
    submission: Annotated[
        Path, typer.Argument(help="The submission: a directory holding checkers.py, or the file.")
    ],
    profile: Annotated[
        str, typer.Option("--profile", help=f"The assignment profile: {', '.join(PROFILES)}.")
    ] = "endgame",
    suite: Annotated[
        Path | None,
        typer.Option(
            "--suite",
            "--puzzles",
            help="The profile's suite file (default: its public examples, autograder/examples/).",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print results.json to stdout instead of a table.")
    ] = False,
    results: Annotated[
        Path | None, typer.Option("--results", help="Write results.json (Gradescope) here.")
    ] = None,
    html: Annotated[
        Path | None,
        typer.Option("--html", help="Write a self-contained HTML report here (every detail)."),
    ] = None,
    python: Annotated[
        str,
        typer.Option("--python", help="The interpreter that runs the student's program."),
    ] = DEFAULT_PYTHON,
    gradescope: Annotated[
        bool,
        typer.Option(
            "--gradescope",
            help="Autograder mode: a missing submission is graded 0 with its reason (and "
            "--results written) instead of being a usage error.",
        ),
    ] = False,
) -> None:
    """Grade a submission in the sandbox and explain every point lost.

    The table and --html show every detail (whoever runs this holds the suite). results.json
    (--results, --json) is Gradescope's: every test with its visibility, which Gradescope
    honours, and a top-level output, which students see at once, naming no private test.
    Exits 0 whenever grading ran, whatever the score; 2 for a usage error, such as a
    SUBMISSION that does not exist or cannot be graded (a file that is not a .py program, a
    folder without the profile's program; with --gradescope such a submission is graded 0
    instead, so the course platform always gets a results.json). Where no sandbox can be made
    it grades anyway and says so on stderr.
    """
    from autograder.grade import GradeError, GradeOptions, grade
    from autograder.visibility import OWNER, gradescope_json, view
    from cli.grade_report import show_results
    from sandbox import Mode, sandbox_support

    if profile not in PROFILES:
        fail(f"unknown profile {profile!r}: choose one of {', '.join(PROFILES)}")
    if not gradescope:
        problem = submission_problem(profile, submission)
        if problem is not None:
            fail(problem)
    if not os.access(python, os.X_OK):
        fail(f"the interpreter {python} does not exist or is not executable (see --python)")
    suite = suite if suite is not None else public_suite(profile)
    if not suite.is_file():
        fail(f"the {profile} suite {suite} does not exist (see --suite)")
    support = sandbox_support()
    if support.mode is Mode.NONE:
        typer.echo(
            f"note: no sandbox here ({support.reason}): the program runs as you, with its "
            "resource limits only; see docs/GRADER.md, Sandbox",
            err=True,
        )
    try:
        report = grade(profile, submission, GradeOptions(suite=suite, python=python))
    except GradeError as error:
        fail(str(error))
    show_results(
        view(report, OWNER), gradescope_json(report), results=results, html=html, as_json=as_json
    )


def submission_problem(profile: str, submission: Path) -> str | None:
    """Return why `submission` cannot be graded under `profile`, in one line, or None.

    A submission is a folder holding the profile's program at its top level, or that program
    as a single .py file (the endgame profile's must be named checkers.py, as the grader runs
    it by that name; an agent file of any name is graded as agent.py).
    """
    from autograder.grade import MAIN_FILES

    program = MAIN_FILES[profile]
    shape = f"give a folder holding {program}, or {program} itself"
    if not submission.exists():
        return f"the submission {submission} does not exist ({shape})"
    if submission.is_dir():
        if (submission / program).is_file():
            return None
        found = sorted(p.name for p in submission.iterdir() if p.suffix == ".py")
        listed = f"it holds {', '.join(found)}" if found else "it holds no .py file"
        return f"the folder {submission} has no {program} at its top level ({listed}); {shape}"
    if not submission.is_file():
        return f"the submission {submission} is neither a folder nor a file; {shape}"
    if submission.suffix != ".py":
        return f"the submission {submission} is not a Python program (.py); {shape}"
    if profile == "endgame" and submission.name != program:
        return (
            f"the submission {submission} is not named {program}, the name the grader runs it "
            f"by; rename it, or {shape}"
        )
    return None


def starter_command(
    profile: Annotated[
        str, typer.Option("--profile", help=f"The assignment profile: {', '.join(PROFILES)}.")
    ] = "endgame",
    out: Annotated[
        Path, typer.Option("--out", help="The folder to write the starter file into.")
    ] = Path("."),
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite a file of the same name.")
    ] = False,
) -> None:
    """Write the starter file a course hands out: checkers.py (endgame) or agent.py (agent).

    The starter reads and writes the assignment's formats and runs as the grader runs it; the
    search is left to the student, so it scores 0 until it is written, with the grader saying
    what is missing.
    """
    from autograder.grade import GradeError, starter

    try:
        name, text = starter(profile)
    except GradeError as error:
        fail(str(error))
    target = out / name
    if target.exists() and not force:
        fail(f"{target} exists already; choose another --out, or --force to overwrite it")
    try:
        out.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as error:
        fail(f"cannot write {target}: {error.strerror}")
    console.print(escape(f"wrote {target}, the {profile} assignment's starter"), soft_wrap=True)
    grade = f"arena grade {out} --profile {profile}"
    upload = f"arena grader submit {target} --profile {profile} --server URL --token TOKEN"
    console.print(escape(f"grade it here: {grade}; or upload it: {upload}"), soft_wrap=True)
