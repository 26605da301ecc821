"""Grading on the wire: the profiles and a job's row as protocol models.

What a job's `results.json` and HTML report hold is the grader's (autograder.results,
autograder.html), and what a reader sees of them autograder.visibility's; this module only says
what a client sees of the profiles and of a job's status.
"""

from __future__ import annotations

from typing import Final

from autograder.endgame_verdict import WIN_SLACK
from autograder.grade import MAIN_FILES
from autograder.profiles import PROFILES
from autograder.results import GradeReport
from autograder.visibility import UPLOADER, Reader, shows_times, view
from protocol.messages import (
    GradingJob,
    GradingProfile,
    GradingProfiles,
    JobStatus,
    QueueWait,
)
from server.db.models import GradingJob as JobRow
from server.db.models import epoch_ms
from server.grading.queue import Place
from server.settings import Settings

DESCRIPTIONS: Final = {
    "endgame": "Endgame solver: for each puzzle the grader runs python3 checkers.py "
    "--inputfile input.txt --outputfile output.txt, and the program writes the boards from the "
    "puzzle to the end of the game, red winning as fast as possible and black resisting as "
    "long as possible. Each puzzle's point: half when every red move keeps a forced win (at "
    f"most {WIN_SLACK} plies slower than the fastest), a quarter more when every red move "
    "keeps the fastest win, a quarter more when every black move resists longest; a line "
    "that does not end in a red win earns nothing.",
    "agent": "Agent: agent.py defines select_move(board, player, depth_limit, time_limit), "
    "called on positions and in games. Points: legal moves 20, exact minimax moves and values "
    "at depths 1 to 3 (10 each), games against four reference bots (10 each), and 10 for "
    "answering in time, shared among the calls answered with a legal move.",
}
"""What each profile grades, in plain words (a page shows them as they are)."""


def describe_profiles(settings: Settings, *, sandboxed: bool) -> GradingProfiles:
    """Describe the profiles and the limits of an upload (`sandboxed`: student code is isolated)."""
    return GradingProfiles(
        profiles=tuple(
            GradingProfile(
                name=name,
                description=DESCRIPTIONS[name],
                main_file=MAIN_FILES[name],
                max_upload_bytes=settings.grader.max_upload_bytes,
            )
            for name in PROFILES
        ),
        max_files=settings.grader.max_files,
        queue_limit=settings.grader.max_queued,
        sandboxed=sandboxed,
    )


def describe_wait(place: Place) -> QueueWait:
    """Return why a queued job waits, in fields and in words, from its `place`."""
    if place.ahead == 0:
        reason = "next in the queue: it starts as soon as a worker is free"
    else:
        parts = []
        if place.own:
            parts.append(
                _count(place.own, "of your own earlier uploads", "of your own earlier upload")
            )
        if place.address:
            parts.append(
                _count(
                    place.address,
                    "from other players at your address",
                    "from another player at your address",
                )
            )
        if place.others:
            parts.append(_count(place.others, "from other uploaders", "from another uploader"))
        reason = (
            f"{place.ahead} {'job is' if place.ahead == 1 else 'jobs are'} ahead of it in the "
            f"queue: {', '.join(parts)}"
        )
        if place.own or place.address:
            reason += (
                "; the queue takes addresses in turn, then the players of an address in turn, "
                "so the jobs of a player or an address with more waiting go after the others'"
            )
    return QueueWait(
        position=place.position,
        ahead=place.ahead,
        ahead_own=place.own,
        ahead_address=place.address,
        ahead_others=place.others,
        reason=reason,
    )


def _count(count: int, many: str, one: str) -> str:
    return f"{count} {many}" if count != 1 else f"1 {one}"


def describe_job(
    row: JobRow,
    place: Place | None,
    report: GradeReport | None = None,
    reader: Reader = UPLOADER,
) -> GradingJob:
    """Return a job's status as `reader` sees it (autograder.visibility; by default its uploader).

    `place` is where it stands in the queue (server.grading.queue.Place); None for a job that
    waits for no worker. `report` is the finished job's (None before): the summary is
    `reader`'s view of it, and the start and finish times are left out when `reader` may not
    see them.
    """
    status: JobStatus = row.status  # type: ignore[assignment]
    base = f"/grader/jobs/{row.id}"
    summary = row.summary if report is None else view(report, reader).output
    timed = shows_times(reader, report)
    return GradingJob(
        job_id=row.id,
        profile=row.profile,
        status=status,
        files=tuple(row.files),
        queue_position=None if place is None else place.position,
        wait=None if place is None else describe_wait(place),
        score=row.score,
        max_score=row.max_score,
        summary=None if summary is None else summary[:4000],
        created_time_ms=epoch_ms(row.created_at),
        started_time_ms=None if row.started_at is None or not timed else epoch_ms(row.started_at),
        finished_time_ms=(
            None if row.finished_at is None or not timed else epoch_ms(row.finished_at)
        ),
        results_url=f"{base}/results.json",
        report_url=f"{base}/report.html",
    )
