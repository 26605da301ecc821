// The course pages, kept up to date while something is being graded: every element with a
// `data-live` URL is asked again every second while the tab is shown (the cookie says who
// asks), and its text rewritten with text nodes only.
//
// - A submission's status (`data-status` queued or running): once one is graded the page is
//   loaded again, the server drawing its score and report.
// - A regrade's progress (`#regrade-status`, `data-finished="false"`): the counts and the bar;
//   once nothing is queued or running the page is loaded again with the new gradebook.
//
// The texts are the server's own (server/routes/web_courses/common.py), so a page reads the same
// whether it was drawn by the server or updated here.

const POLL_MS = 1000;

function submissionText(submission) {
  if (submission.status === "queued") {
    return submission.queue_position
      ? `Queued: number ${submission.queue_position} in the queue.`
      : "Queued.";
  }
  if (submission.status === "running") return "Being graded now.";
  if (submission.status === "done") return "Graded.";
  return "Failed: the report says why.";
}

function regradeFinished(progress) {
  return progress.queued + progress.running === 0;
}

function regradeText(progress) {
  const graded = progress.done + progress.error;
  if (regradeFinished(progress)) {
    const failed = progress.error ? `, ${progress.error} failed` : "";
    return `Regrade finished: ${graded} of ${progress.total} submissions graded again${failed}.`;
  }
  return (
    `Regrading: ${graded} of ${progress.total} graded, ` +
    `${progress.running} being graded, ${progress.queued} queued.`
  );
}

async function ask(url) {
  const response = await fetch(url, { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response.json();
}

async function followSubmission(element) {
  const submission = await ask(element.dataset.live);
  if (submission.status === "done" || submission.status === "error") return true;
  const text = submissionText(submission);
  if (element.textContent.trim() !== text) element.textContent = text;
  element.dataset.status = submission.status;
  element.classList.remove("status-queued", "status-running");
  element.classList.add(`status-${submission.status}`);
  return false;
}

async function followRegrade(element) {
  const progress = await ask(element.dataset.live);
  if (regradeFinished(progress)) return true;
  const text = regradeText(progress);
  if (element.textContent !== text) element.textContent = text;
  const bar = document.getElementById("regrade-progress");
  if (bar) {
    bar.max = Math.max(progress.total, 1);
    bar.value = progress.done + progress.error;
    bar.textContent = `${progress.done + progress.error} of ${progress.total}`;
  }
  return false;
}

const submissions = [...document.querySelectorAll('[data-live][data-status]')].filter(
  (element) => element.dataset.status === "queued" || element.dataset.status === "running",
);
const regrade = document.querySelector('#regrade-status[data-live][data-finished="false"]');

if (submissions.length || regrade) {
  let reloading = false;
  let asking = false;
  const tick = async () => {
    if (reloading || asking || document.hidden) return;
    asking = true;
    try {
      const followed = submissions.map(followSubmission);
      if (regrade) followed.push(followRegrade(regrade));
      const finished = await Promise.all(followed);
      if (finished.some(Boolean)) {
        reloading = true;
        location.reload();
      }
    } catch {
      // The server is restarting or the network is down: the next tick tries again.
    } finally {
      asking = false;
    }
  };
  setInterval(tick, POLL_MS);
  // A hidden tab asks nothing; it catches up as soon as it is shown again.
  document.addEventListener("visibilitychange", tick);
}
