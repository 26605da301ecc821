"""The slots grading and hosted bots share in one process: each keeps its reserve whatever the
other's load, either borrows what the other leaves idle, and the settings refuse a split that
cannot hold, or sandbox uids that overlap."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from pydantic import ValidationError

from server.jobs.worker import check_uids
from server.limits.slots import ComputeSlots, SlotsBusyError, Split
from server.setting_groups import cpu_count
from server.settings import Settings


def settings(**values: Any) -> Settings:
    return Settings(database_url="sqlite+aiosqlite:///:memory:", **values)


SPLIT = Split(slots=6, grading_reserved=2, hosted_reserved=1, grading_max=5, hosted_max=4)


def fill(slots: ComputeSlots, kind: Any) -> int:
    """Take every slot `kind` can get now; return how many."""
    taken = 0
    while slots.try_take(kind):
        taken += 1
    return taken


def test_a_flood_of_hosted_bots_leaves_grading_its_reserve() -> None:
    slots = ComputeSlots(SPLIT)
    assert fill(slots, "hosted") == 4  # its cap: 6 slots less grading's reserve of 2
    assert fill(slots, "grading") == 2  # grading's reserve was kept free
    assert not slots.try_take("hosted")


def test_a_flood_of_grading_leaves_hosted_bots_their_reserve() -> None:
    slots = ComputeSlots(SPLIT)
    assert fill(slots, "grading") == 5  # its cap, which borrows 3 beyond its reserve
    assert fill(slots, "hosted") == 1  # hosted's reserve was kept free
    assert slots.held("hosted") == 1 and slots.held("grading") == 5


def test_idle_capacity_is_borrowed_and_given_back() -> None:
    slots = ComputeSlots(SPLIT)
    assert fill(slots, "hosted") == 4
    slots.give_back("hosted")
    slots.give_back("hosted")
    slots.give_back("hosted")
    # With one hosted program left, grading borrows beyond its reserve up to its cap.
    assert fill(slots, "grading") == 5
    assert fill(slots, "hosted") == 0  # 5 + 1 of 6
    assert not slots.try_take("grading") and not slots.try_take("hosted")
    with pytest.raises(RuntimeError, match="does not hold"):
        ComputeSlots(SPLIT).give_back("grading")


class ManualClock:
    """A clock the test moves; it says when a waiter has read it."""

    def __init__(self) -> None:
        self.now = 0.0
        self.readings = 0
        self.read = threading.Condition()

    def __call__(self) -> float:
        with self.read:
            self.readings += 1
            self.read.notify_all()
            return self.now

    def wait_for_readings(self, count: int) -> None:
        with self.read:
            assert self.read.wait_for(lambda: self.readings >= count, timeout=60)


def waiting_hosted(slots: ComputeSlots, clock: ManualClock, wait_s: float) -> list[Any]:
    """Start a thread that waits for a hosted slot; return the list it puts its outcome in."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            slots.take_waiting("hosted", wait_s, clock)
            outcome.append("taken")
        except SlotsBusyError as busy:
            outcome.append(busy)

    thread = threading.Thread(target=run)
    thread.start()
    outcome.append(thread)
    return outcome


def test_a_hosted_start_waits_for_a_slot_and_gets_one_given_back() -> None:
    slots = ComputeSlots(SPLIT)
    fill(slots, "hosted")
    clock = ManualClock()
    outcome = waiting_hosted(slots, clock, wait_s=10.0)
    clock.wait_for_readings(2)  # its deadline and one look: it waits now
    slots.give_back("hosted")
    outcome[0].join()
    assert outcome[1:] == ["taken"]
    assert slots.held("hosted") == 4


def test_a_hosted_start_fails_once_its_wait_is_over_saying_why() -> None:
    slots = ComputeSlots(SPLIT)
    fill(slots, "grading")
    assert fill(slots, "hosted") == 1
    clock = ManualClock()
    outcome = waiting_hosted(slots, clock, wait_s=10.0)
    clock.wait_for_readings(2)
    clock.now = 9.5
    slots.wake()
    clock.wait_for_readings(3)  # looked again before its deadline: still waiting
    assert len(outcome) == 1
    clock.now = 10.0
    slots.wake()
    outcome[0].join()
    (busy,) = outcome[1:]
    assert isinstance(busy, SlotsBusyError)
    assert str(busy) == (
        "no compute slot came free on this server within 10 s: hosted holds 1 and grading 5 "
        "of the 6 slots (grading keeps 2 of them)"
    )


def test_a_grading_worker_waits_for_a_slot_a_hosted_program_gives_back() -> None:
    split = Split(slots=3, grading_reserved=1, hosted_reserved=1, grading_max=2, hosted_max=2)
    slots = ComputeSlots(split)

    async def scenario() -> None:
        assert fill(slots, "hosted") == 2 and fill(slots, "grading") == 1
        grading = asyncio.create_task(slots.take("grading"))
        await asyncio.sleep(0)
        assert not grading.done()  # hosted borrowed the slot beyond both reserves
        # A hosted program ends in another thread (a search thread closing its bot).
        ender = threading.Thread(target=slots.give_back, args=("hosted",))
        ender.start()
        await grading
        ender.join()
        assert slots.held("grading") == 2

    asyncio.run(scenario())


def test_a_cancelled_grading_wait_takes_no_slot() -> None:
    slots = ComputeSlots(
        Split(slots=2, grading_reserved=1, hosted_reserved=1, grading_max=1, hosted_max=1)
    )

    async def scenario() -> None:
        assert slots.try_take("grading")
        waiting = asyncio.create_task(slots.take("grading"))
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert slots.held("grading") == 1
        slots.give_back("grading")  # wakes no one: the cancelled wait is gone
        assert slots.held("grading") == 0 and slots.try_take("grading")

    asyncio.run(scenario())


def test_the_default_split_follows_the_cpus_and_grader_workers() -> None:
    cpus = cpu_count()
    split = Split.of(settings(grader_workers=2, hosted_max_running=16))
    assert split.grading_reserved == min(2, max(1, cpus // 2))
    # Room for grading's reserve beside every hosted seat and upload tried at once.
    assert split.slots == max(8 * cpus, split.grading_reserved + 16 + 4)
    assert split.hosted_reserved == max(1, split.slots // 4)
    assert split.hosted_max == split.slots - split.grading_reserved
    assert split.grading_max == 2
    given = Split.of(
        settings(
            grader_workers=3,
            compute_slots=5,
            compute_grading_reserved=2,
            compute_hosted_reserved=2,
            compute_hosted_max=3,
        )
    )
    assert given == Split(
        slots=5, grading_reserved=2, hosted_reserved=2, grading_max=3, hosted_max=3
    )


def test_a_cluster_s_server_keeps_no_grading_reserve() -> None:
    server = Settings(
        database_url="postgresql+asyncpg://arena@db/arena",
        role="server",
        grader_workers=4,
        compute_slots=10,
        compute_grading_reserved=2,
    )
    # Its gradings run on `arena worker`: every slot serves hosted bots.
    assert Split.of(server) == Split(
        slots=10, grading_reserved=0, hosted_reserved=2, grading_max=0, hosted_max=10
    )


@pytest.mark.parametrize(
    ("values", "words"),
    [
        (
            {"grader_workers": 1, "compute_grading_reserved": 2},
            "compute_grading_reserved (2) is more than grader_workers (1) can use",
        ),
        (
            {
                "grader_workers": 4,
                "compute_slots": 4,
                "compute_grading_reserved": 3,
                "compute_hosted_reserved": 2,
            },
            "the reserves (compute_grading_reserved 3, compute_hosted_reserved 2) add up to more "
            "than compute_slots (4)",
        ),
        (
            {"compute_slots": 8, "compute_grading_reserved": 1, "compute_hosted_max": 8},
            "compute_hosted_max (8) must lie between compute_hosted_reserved (2) and "
            "compute_slots less compute_grading_reserved (7)",
        ),
        (
            {"compute_slots": 8, "compute_hosted_reserved": 3, "compute_hosted_max": 2},
            "compute_hosted_max (2) must lie between compute_hosted_reserved (3)",
        ),
    ],
)
def test_a_split_that_cannot_hold_is_refused_at_start(values: dict[str, Any], words: str) -> None:
    with pytest.raises(ValidationError, match=words.replace("(", r"\(").replace(")", r"\)")):
        settings(**values)


def test_overlapping_sandbox_uids_are_refused_at_start() -> None:
    with pytest.raises(ValidationError) as refused:
        settings(
            grader_uid_base=70000, grader_workers=2, hosted_uid_base=69990, hosted_max_running=8
        )
    assert (
        "the hosted bots' sandbox uids (69990-70001: hosted_uid_base and hosted_max_running + 4 "
        "after it) overlap the grader's (70000-70001: grader_uid_base and grader_workers after "
        "it): move hosted_uid_base or grader_uid_base apart"
    ) in str(refused.value)
    # Side by side is fine: the hosted range ends where the grader's begins.
    settings(grader_uid_base=70000, grader_workers=2, hosted_uid_base=69988, hosted_max_running=8)


def test_a_worker_whose_uids_overlap_the_hosted_bots_is_refused() -> None:
    configured = settings(grader_uid_base=64000, hosted_uid_base=65000, hosted_max_running=16)
    # Each job at once takes 3 uids: its grading's, then two hosted programs' (a game's seats).
    assert check_uids(configured, 64000 + 40 * 24, 8) == range(64960, 64984)  # slot 40
    assert check_uids(configured, 64976, 8) == range(64976, 65000)  # up to the hosted range
    with pytest.raises(ValueError) as refused:
        check_uids(configured, 64000 + 41 * 24, 8)  # the worker of slot 41
    assert str(refused.value) == (
        "this worker's sandbox uids (64984-65007) overlap the hosted bots' (65000-65019: "
        "hosted_uid_base and hosted_max_running + 4 after it): move hosted_uid_base, "
        "grader_uid_base or --uid-base apart"
    )
