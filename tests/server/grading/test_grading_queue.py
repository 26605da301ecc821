"""The grading queue's order: fair between uploaders, fresh uploads before background work."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from server.grading.queue import Entry, FairQueue, Place, address_ranks


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


def test_addresses_take_turns_then_the_players_of_an_address() -> None:
    queue = FairQueue()
    # One address, two tokens, five jobs; a second address with one player, two jobs.
    for n in range(3):
        queue.push(f"p1-{n}", owner="p1", address="10.0.0.1")
    for n in range(2):
        queue.push(f"p2-{n}", owner="p2", address="10.0.0.1")
    for n in range(2):
        queue.push(f"q-{n}", owner="q", address="10.0.0.2")
    assert drain(queue) == ["p1-0", "q-0", "p2-0", "q-1", "p1-1", "p2-1", "p1-2"]


def test_an_address_being_served_goes_after_a_newcomer() -> None:
    queue = FairQueue()
    queue.push("flood-0", owner="p1", address="A")
    assert queue.pop() == "flood-0"  # running
    queue.push("flood-1", owner="p1", address="A")
    queue.push("flood-2", owner="p2", address="A")
    queue.push("other", owner="q", address="B")
    assert queue.position("other") == 1
    assert queue.place("flood-2") == Place(position=2, own=0, address=0, others=1)
    assert queue.place("flood-1") == Place(position=3, own=0, address=1, others=1)
    queue.push("flood-3", owner="p2", address="A")
    assert queue.place("flood-3") == Place(position=4, own=1, address=1, others=1)
    assert queue.waiting_from("A") == 3 and queue.waiting_from("B") == 1
    # Finishing the running job changes no rank: the newcomer is still next.
    queue.done("flood-0")
    assert drain(queue) == ["other", "flood-2", "flood-1", "flood-3"]


def test_exempt_jobs_do_not_count_toward_their_address() -> None:
    queue = FairQueue()
    queue.push("course", owner="s", address="A", exempt=True)
    queue.push("upload", owner="t", address="A")
    queue.push("regrade", owner="t", address="A", background=True)
    assert queue.waiting_from("A") == 1


def test_address_ranks_count_running_jobs_first_in_their_turn() -> None:
    ranks = address_ranks(
        [
            Entry("a", "p1", True, 0),
            Entry("b", "p1", False, 1),
            Entry("c", "p2", False, 2),
            Entry("d", "p2", False, 3),
            Entry("e", None, False, 4),
        ]
    )
    # Turn 0: a (running), c, e; turn 1: b, d.
    assert ranks == {"c": 1, "e": 2, "b": 3, "d": 4}


pushes_with_addresses = st.lists(
    st.tuples(st.sampled_from("abcd"), st.sampled_from("xy"), st.booleans(), st.booleans()),
    min_size=0,
    max_size=40,
)


@given(pushes_with_addresses)
def test_each_place_is_where_the_job_is_taken_with_jobs_running_and_done(
    steps: list[tuple[str, str, bool, bool]],
) -> None:
    """Pushes, each followed or not by a pop (a worker taking a job) and a done: places
    always equal the order of the pops that follow, and count whose jobs are before."""
    queue = FairQueue()
    owners: dict[str, tuple[str, str]] = {}
    for number, (owner, address, take, finish) in enumerate(steps):
        job_id = f"job-{number}"
        owners[job_id] = (owner, address)
        queue.push(job_id, owner=owner, address=address)
        if take and (taken := queue.pop()) is not None and finish:
            queue.done(taken)
    waiting = [job for job in owners if job in queue]
    places = queue.places(waiting)
    order = drain(queue)
    assert sorted(order) == sorted(waiting)
    assert [places[job].position for job in order] == list(range(1, len(order) + 1))
    for index, job in enumerate(order):
        before = order[:index]
        owner, address = owners[job]
        own = sum(1 for other in before if owners[other][0] == owner)
        same_address = sum(
            1 for other in before if owners[other][0] != owner and owners[other][1] == address
        )
        assert places[job] == Place(index + 1, own, same_address, index - own - same_address)
    # Each player's jobs from one address in their order (from two addresses, a player's
    # jobs are in two lanes).
    for lane in set(owners.values()):
        mine = [int(job.split("-")[1]) for job in order if owners[job] == lane]
        assert mine == sorted(mine)
