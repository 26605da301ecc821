"""The grading queue's order: fair between uploaders, fresh uploads before background work."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from server.grading.queue import FairQueue


def drain(queue: FairQueue) -> list[str]:
    order = []
    while (job := queue.pop()) is not None:
        order.append(job)
    return order


def test_one_uploader_with_many_jobs_does_not_hold_up_the_others() -> None:
    queue = FairQueue()
    for n in range(5):
        queue.push(f"flood-{n}", owner="flooder")
    queue.push("alice-0", owner="alice")
    queue.push("bob-0", owner="bob")
    queue.push("alice-1", owner="alice")
    assert queue.position("alice-0") == 2
    assert queue.position("bob-0") == 3
    assert queue.position("flood-4") == 8
    assert drain(queue) == [
        "flood-0",
        "alice-0",
        "bob-0",
        "flood-1",
        "alice-1",
        "flood-2",
        "flood-3",
        "flood-4",
    ]


def test_background_work_waits_for_every_fresh_upload() -> None:
    queue = FairQueue()
    queue.push("regrade-0", owner="alice", background=True)
    queue.push("regrade-1", owner="bob", background=True)
    queue.push("fresh", owner="carol")
    assert queue.position("regrade-0") == 2
    assert queue.pop() == "fresh"
    queue.push("later", owner="alice")
    assert queue.position("regrade-0") == 2
    assert drain(queue) == ["later", "regrade-0", "regrade-1"]


def test_a_job_pushed_twice_waits_once_and_a_removed_job_is_gone() -> None:
    queue = FairQueue()
    queue.push("a", owner=1)
    queue.push("a", owner=1)
    queue.push("b", owner=None)
    assert len(queue) == 2
    assert queue.waiting_of(1) == 1
    assert queue.remove("a")
    assert not queue.remove("a")
    assert "a" not in queue
    assert queue.position("a") is None
    assert drain(queue) == ["b"]
    assert queue.pop() is None


jobs = st.lists(st.tuples(st.sampled_from("abcde"), st.booleans()), min_size=0, max_size=40)


@given(jobs, st.lists(st.integers(0, 39), max_size=5))
def test_each_position_is_the_place_the_job_is_taken(
    pushes: list[tuple[str, bool]], removals: list[int]
) -> None:
    queue = FairQueue()
    for number, (owner, background) in enumerate(pushes):
        queue.push(f"job-{number}", owner=owner, background=background)
    for number in removals:
        queue.remove(f"job-{number}")
    waiting = [f"job-{n}" for n in range(len(pushes)) if f"job-{n}" in queue]
    positions = {job: queue.position(job) for job in waiting}
    order = drain(queue)
    assert sorted(order) == sorted(waiting)
    assert [positions[job] for job in order] == list(range(1, len(order) + 1))
    # Fresh first; each owner's jobs of a tier in the order they came.
    tiers = [pushes[int(job.split("-")[1])][1] for job in order]
    assert tiers == sorted(tiers)
    for owner in "abcde":
        for background in (False, True):
            mine = [
                int(job.split("-")[1])
                for job in order
                if pushes[int(job.split("-")[1])] == (owner, background)
            ]
            assert mine == sorted(mine)
