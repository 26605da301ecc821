"""Grade one hosted submission in a process of its own: `python -m autograder.job JOB_DIR`.

The server (server/grading/workers.py) prepares JOB_DIR, mode 0700, holding `job.json` and the
upload in `submission/`; it runs this module as a child process under a time limit and reads
back `results.json` (Gradescope's format). A child keeps the solver's CPU work off
the server's event loop, and a grading that runs too long can be killed as a whole.

job.json::

    {"profile": "endgame", "suite": "/private/suites/endgame.json", "python": "/usr/bin/python3",
     "uid": 64000, "gid": 64000, "budget_s": 600}

`budget_s` (optional; null or absent: none) bounds the wall time of all the submission's runs
together (autograder.budget): the tests left once it is spent are reported as not run.

A `suite` file that does not exist yet is generated first, with a random seed, under a lock
file (so concurrent jobs make it once) and written 0600: the server's private suite.

Exit status: 0 when the submission was graded (whatever its score); 1 when the grader itself
failed, with results.json still written and saying so in general words (the details, which
may quote the suite or what the submission wrote, go to stderr, the server's `grader.log` in
JOB_DIR); 2 for a bad JOB_DIR or job.json; 143 when stopped by SIGTERM, after the running
sandbox is killed and its working directory (holding the test's input) removed. A child
killed outright leaves that directory behind: each child first removes those of children no
longer alive (sandbox.workdirs.sweep_runs).

The private tests run in a fresh unpredictable order each time (autograder.grade.GradeOptions).
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import signal
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from autograder.endgame_judge import built_database
from autograder.grade import GradeError, GradeOptions, grade, write_suite
from autograder.results import GradeReport, TestResult
from sandbox import Isolation
from sandbox.workdirs import sweep_runs

JOB_FILE = "job.json"
SUBMISSION_DIR = "submission"
RESULTS_FILE = "results.json"


class JobError(Exception):
    """JOB_DIR or its job.json cannot be used (the server's mistake)."""


@dataclass(frozen=True)
class Job:
    """What job.json says: the profile, the suite file, the interpreter, the sandbox uid and
    the wall-time budget of the runs (None: none)."""

    profile: str
    suite: Path | None
    python: str
    uid: int
    gid: int
    budget_s: float | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the job.json object."""
        return {
            "profile": self.profile,
            "suite": None if self.suite is None else str(self.suite),
            "python": self.python,
            "uid": self.uid,
            "gid": self.gid,
            "budget_s": self.budget_s,
        }


def read_job(job_dir: Path) -> Job:
    """Return the job of `job_dir`; raise JobError naming what is wrong."""
    path = job_dir / JOB_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise JobError(f"cannot read {path}: {error}") from error
    try:
        suite = data["suite"]
        budget = data.get("budget_s")
        return Job(
            profile=str(data["profile"]),
            suite=None if suite is None else Path(suite),
            python=str(data["python"]),
            uid=int(data["uid"]),
            gid=int(data["gid"]),
            budget_s=None if budget is None else float(budget),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise JobError(f"{path}: missing or bad field {error}") from error


def ensure_suite(profile: str, path: Path) -> None:
    """Generate the private suite of `profile` at `path` unless it exists (once, under a lock)."""
    if path.exists():
        return
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():  # another job made it while this one waited
            return
        partial = path.with_name(path.name + ".partial")
        database = built_database() if profile == "endgame" else None
        write_suite(profile, partial, secrets.randbits(32), public=False, database=database)
        os.replace(partial, path)


def run_job(job_dir: Path) -> GradeReport:
    """Grade the submission of `job_dir` and write its results; return the report.

    Raises GradeError (and JobError) for the grader's own failures; the caller reports them.
    """
    job = read_job(job_dir)
    if job.suite is not None:
        ensure_suite(job.profile, job.suite)
    options = GradeOptions(
        suite=job.suite,
        python=job.python,
        isolation=Isolation(uid=job.uid, gid=job.gid),
        budget_s=job.budget_s,
    )
    report = grade(job.profile, job_dir / SUBMISSION_DIR, options)
    write_results(job_dir, report)
    return report


def failure_report(profile: str, why: str) -> GradeReport:
    """Return the report of a grading that failed through no fault of the submission.

    Its one test is visible to the uploader: `why` must say nothing of the suite or of what
    the submission did.
    """
    message = (
        f"The grader failed: {why}. This is not a problem with your submission; please "
        "report it to the course staff, who can grade it again."
    )
    test = TestResult(
        name="grader error",
        score=0.0,
        max_score=0.0,
        output=message,
        reasons=("grader error",),
    )
    return GradeReport(profile=profile, tests=[test], output=message)


def write_results(job_dir: Path, report: GradeReport) -> None:
    """Write results.json into `job_dir`, replaced whole (a reader never sees half of it)."""
    partial = job_dir / (RESULTS_FILE + ".partial")
    partial.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    os.replace(partial, job_dir / RESULTS_FILE)


def main(argv: list[str]) -> int:
    """Grade the job directory named by `argv[0]`; return the exit status (see module doc)."""
    if len(argv) != 1:
        print("usage: python -m autograder.job JOB_DIR", file=sys.stderr)
        return 2
    job_dir = Path(argv[0])
    signal.signal(signal.SIGTERM, _stop)
    sweep_runs()
    try:
        job = read_job(job_dir)
    except JobError as error:
        print(error, file=sys.stderr)
        return 2
    try:
        run_job(job_dir)
    except (GradeError, JobError) as error:
        # The message may quote the suite (a private board) or the submission's output: the
        # uploader is told what kind of failure it was, the log gets the rest.
        write_results(job_dir, failure_report(job.profile, "its suite could not be used"))
        print(error, file=sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001 - a grader bug must still leave results
        traceback.print_exc()
        why = f"an internal error ({type(error).__name__})"
        write_results(job_dir, failure_report(job.profile, why))
        return 1
    return 0


def _stop(signum: int, frame: FrameType | None) -> None:
    """Unwind on SIGTERM, so that every `finally` runs: the sandbox's removes its directory."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second one must not cut the clean-up
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
