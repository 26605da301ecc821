"""The hosted autograder on the wire: its profiles, a grading job and its place in the queue."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, Strict

from protocol.messages.base import Count, EpochMs, Text, WireModel

JobId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_\-]+$",
        description="A grading job's id, chosen by the server: anyone holding it can read the "
        "job, so keep it as private as the submission.",
    ),
]
GradingProfileName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=32,
        pattern=r"^[a-z][a-z0-9_]*$",
        description="An assignment profile of the autograder, e.g. `endgame` or `agent`.",
    ),
]
JobStatus = Literal["queued", "running", "done", "error"]
"""`queued`: waiting for a grader slot; `running`: being graded; `done`: graded (whatever the
score); `error`: the grader itself failed (its results say so and score 0; not the student's
fault: report it)."""


class GradingProfile(WireModel):
    """An assignment profile the hosted autograder grades, and what an upload must hold."""

    type: Literal["grading_profile"] = "grading_profile"
    name: GradingProfileName
    description: Annotated[str, Field(max_length=2000)]
    main_file: Annotated[str, Field(min_length=1, max_length=64)]
    """The program every upload must hold at its top level, e.g. `checkers.py`."""
    max_upload_bytes: Count


class GradingProfiles(WireModel):
    """The profiles the server grades, and the limits of an upload."""

    type: Literal["grading_profiles"] = "grading_profiles"
    profiles: tuple[GradingProfile, ...]
    max_files: Count
    queue_limit: Count
    """Jobs that may wait at once; beyond it an upload gets QUEUE_FULL."""
    sandboxed: bool
    """Whether student code runs in the sandbox; when false, uploads get GRADER_UNAVAILABLE
    (unless the operator allowed unsandboxed grading, for trials)."""


class QueueWait(WireModel):
    """Why a queued grading job waits: its place, and whose jobs are graded before it.

    `position` counts from 1 (1: the next job a free worker takes); `ahead` jobs (position
    less one) are taken before it: `ahead_own` of them the same player's earlier uploads,
    `ahead_address` other players' from the same client address, `ahead_others` everyone
    else's. The queue takes client addresses in turn, then the players of an address in turn
    (docs/GRADER.md), so a player or an address with many jobs waiting waits behind the
    others. `reason` says the same in words.
    """

    type: Literal["queue_wait"] = "queue_wait"
    position: Annotated[int, Strict(), Field(ge=1)]
    ahead: Count
    ahead_own: Count
    ahead_address: Count
    ahead_others: Count
    reason: Text


class GradingJob(WireModel):
    """A grading job: its status, its place in the queue and why it waits, and its score once
    graded.

    `results_url` (Gradescope's results.json) and `report_url` (an HTML report) answer once the
    status is `done` or `error`; before then they answer JOB_NOT_FINISHED.
    """

    type: Literal["grading_job"] = "grading_job"
    job_id: JobId
    profile: GradingProfileName
    status: JobStatus
    files: tuple[Annotated[str, Field(max_length=255)], ...]
    queue_position: Annotated[int, Strict(), Field(ge=1)] | None = None
    """1 for the next job to start; None unless `queued`."""
    wait: QueueWait | None = None
    """Why it waits, while `queued` (its place and whose jobs are before it)."""
    score: Annotated[float, Field(ge=0)] | None = None
    max_score: Annotated[float, Field(ge=0)] | None = None
    summary: Annotated[str, Field(max_length=4000)] | None = None
    created_time_ms: EpochMs
    started_time_ms: EpochMs | None = None
    finished_time_ms: EpochMs | None = None
    results_url: Annotated[str, Field(max_length=256)]
    report_url: Annotated[str, Field(max_length=256)]
