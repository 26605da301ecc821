"""The hosted autograder: uploads become queued grading jobs, graded a few at a time.

`GradingService` is built in the lifespan and kept on `app.state.grading`. An upload
(`submit`) is checked (profile, file names, size, the profile's main program), written to the
grader's private directory and stored as a `queued` row before it is acknowledged; from then
on it is graded even if the server restarts.

Its rooms, each importing only those below it (an import-linter contract):

- `service`: the policies (profiles, the sandbox, the queue's limits) and the answers for the
  jobs;
- `access`: who may read a job, and its report once finished;
- `intake`: an upload on its way into the queue, and the refusals of a full queue;
- `queue`: the order of the waiting jobs (addresses in turn, then their players), in one
  process and as the shared queue's priorities;
- `workers`: the queue and the worker tasks that grade each job in a child process
  (`Grader`, which `arena worker` uses too: server.jobs.grading);
- `shared`: with `ARENA_ROLE=server`, the jobs' admission, order and places in the queue
  shared by every process (procrastinate on PostgreSQL), instead of the in-process queue;
- `store`: the jobs' rows;
- `files`: the grader's private directory (uploads, results, suites);
- `uploads`: an upload's intake (file names, zips, sizes, paths, entries);
- `wire`: the profiles and a job's status as protocol models.

Restarts: `start()` re-queues every job stored `queued` or `running`, oldest first; a job that
was running is graded again from the start.
"""

from server.grading.queue import Place
from server.grading.service import GradingService
from server.grading.store import Admission
from server.grading.uploads import Upload, UploadLimits, unpack
from server.grading.wire import describe_wait

__all__ = [
    "Admission",
    "GradingService",
    "Place",
    "Upload",
    "UploadLimits",
    "describe_wait",
    "unpack",
]
