// A grading job's page while the job waits or runs: its status is asked again every second
// (GET /grader/jobs/{id} as JSON, by the browser's cookie) while the tab is shown, and written as text;
// once the job is finished the page is loaded again, the server drawing the report.

const POLL_MS = 1000;

function statusText(job) {
  if (job.status === "queued") {
    const place = job.queue_position
      ? `Queued: number ${job.queue_position} in the queue.`
      : "Queued.";
    // Why it waits, in the server's words (the job's `wait`), as the page first drew it.
    const why = job.wait ? ` ${job.wait.reason[0].toUpperCase()}${job.wait.reason.slice(1)}.` : "";
    return place + why;
  }
  if (job.status === "running") return "Being graded now.";
  return "Graded.";
}

async function poll(status) {
  if (document.hidden) return false;
  try {
    const response = await fetch(status.dataset.source, {
      headers: { Accept: "application/json" },
    });
    if (!response.ok) return false;
    const job = await response.json();
    if (job.status === "done" || job.status === "error") {
      location.reload();
      return true;
    }
    const text = statusText(job);
    if (status.textContent.trim() !== text) status.textContent = text;
    status.dataset.status = job.status;
    status.className = `job-status status-${job.status}`;
  } catch {
    // The server is restarting or the network is down: the next tick tries again.
  }
  return false;
}

const status = document.getElementById("job-status");
if (status && (status.dataset.status === "queued" || status.dataset.status === "running")) {
  let finished = false;
  const tick = async () => {
    if (!finished) finished = await poll(status);
  };
  setInterval(tick, POLL_MS);
  // A hidden tab asks nothing; it catches up as soon as it is shown again.
  document.addEventListener("visibilitychange", tick);
}
