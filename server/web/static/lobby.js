// The lobby's live matches: the list is fetched again every few seconds from the same
// REST listing the page was rendered from (GET /matches?status=active), and redrawn with
// text nodes only, so a player's name is never read as markup.

import { setBreakable } from "./names.js";

const REFRESH_MS = 3000;

function seatName(seat) {
  if (seat.player) return seat.player;
  if (seat.bot) return `${seat.bot} (${seat.bot.startsWith("hosted:") ? "hosted" : "house"} bot)`;
  if (seat.challenged) return `${seat.challenged} (invited)`;
  return "open seat";
}

function matchItem(match) {
  const item = document.createElement("li");
  item.dataset.matchId = match.match_id;
  const link = document.createElement("a");
  link.href = `/matches/${encodeURIComponent(match.match_id)}`;
  setBreakable(link, `${seatName(match.seats[0])} vs ${seatName(match.seats[1])}`);
  const meta = document.createElement("span");
  meta.className = "meta";
  meta.textContent = `${match.game}, ply ${match.ply}`;
  item.append(link, " ", meta);
  return item;
}

function redraw(list, empty, matches) {
  // A focused link keeps its focus when its match is still listed: items are replaced
  // only when the list's content changed.
  const wanted = matches.map(matchItem);
  const same =
    wanted.length === list.children.length &&
    wanted.every((item, i) => item.textContent === list.children[i].textContent);
  if (!same) list.replaceChildren(...wanted);
  empty.hidden = matches.length > 0;
}

async function refresh(list, empty) {
  try {
    const response = await fetch(list.dataset.source, {
      headers: { Accept: "application/json" },
    });
    if (response.ok) redraw(list, empty, (await response.json()).matches);
  } catch {
    // The server is restarting or the network is down: the next tick tries again.
  }
}

const list = document.getElementById("live-matches");
const empty = document.getElementById("live-empty");
if (list && empty) {
  // A hidden tab asks nothing; it catches up as soon as it is shown again.
  setInterval(() => {
    if (!document.hidden) refresh(list, empty);
  }, REFRESH_MS);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) refresh(list, empty);
  });
}
