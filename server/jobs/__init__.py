"""Jobs for worker processes: the queue engine (procrastinate on PostgreSQL) and its tasks.

With `ARENA_ROLE=server`, work that takes seconds or minutes (grading, house-bot tournament
games) is not run by the server process that accepted it: it is deferred as a job into the
queue, which lives in the PostgreSQL database beside Arena's tables, and `arena worker`
processes run it. The queue engine is procrastinate: its jobs are rows in the database (the
truth: a Redis restart loses none), it orders them by priority, its workers heartbeat, and a
job left running by a dead worker is found (`get_stalled_jobs`) and put back in the queue.

- `queue`: the procrastinate App built from settings (`build_queue`) and its schema;
- `registry`: what a task may use in a worker (`JobRuntime`) and the modules whose tasks a
  worker runs (`TASK_MODULES`; each has `register(app, runtime)`);
- `grading`: the grading task (server.grading grades; the task is its worker-side entry);
- `tournament_games`: the task that plays one game of a house-bot tournament and records it;
- `worker`: `run_worker`, what `arena worker` runs.

The default role `all` uses none of this: grading runs in the server process as before.
"""

from server.jobs.queue import build_queue, ensure_schema
from server.jobs.registry import TASK_MODULES, JobRuntime, register_tasks

__all__ = ["TASK_MODULES", "JobRuntime", "build_queue", "ensure_schema", "register_tasks"]
