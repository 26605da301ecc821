// A tournament's page kept up to date: it watches /ws/tournaments/{id} (hello, then the
// tournament_state, a tournament_game_finished after each game and tournament_finished at the
// end) and redraws the progress, the points table, an SPRT's state (protocol 1.3: its LLR on
// the bar between its bounds, pairs, counts and verdict) and the games with text nodes only. The Elo
// (plot and table) and the crosstable with its LOS are drawn by the server's templates
// (escaped there): after each game the page asks the server for itself again and swaps in
// those two sections, and once the tournament ends its whole tournament part. The page stays
// where it is (no reload; a focused link in a swapped part is focused again in the new one).

import { setBreakable } from "./names.js";

const PROTOCOL_VERSION = "1.3";
const RETRY_MS = 3000;
const ENDED = new Set(["finished", "cancelled", "failed"]);

const root = document.getElementById("tournament");

function displayName(bot) {
  return bot.startsWith("player:") ? bot.slice("player:".length) : bot;
}

function number(value) {
  return String(Number(value));
}

function cell(tag, text) {
  const element = document.createElement(tag);
  element.textContent = text;
  return element;
}

function nameCell(bot) {
  const header = document.createElement("th");
  header.scope = "row";
  if (bot.startsWith("player:")) {
    const link = document.createElement("a");
    link.href = `/players/${encodeURIComponent(displayName(bot))}`;
    link.textContent = displayName(bot);
    header.append(link);
  } else {
    setBreakable(header, bot);
  }
  return header;
}

function drawPoints(points) {
  const body = document.getElementById("points");
  const rows = points.map((row, i) => {
    const line = document.createElement("tr");
    line.dataset.bot = row.bot;
    line.append(
      cell("td", String(i + 1)),
      nameCell(row.bot),
      ...[row.points, row.games, row.wins, row.draws, row.losses].map((v) =>
        cell("td", number(v)),
      ),
    );
    return line;
  });
  body.replaceChildren(...rows);
}

function drawProgress(done, total, status, sprt) {
  // "N of M games played", or, once an SPRT has decided, "decided after N games (at most M)"
  // with a full bar.
  const decided = sprt?.verdict === "H0" || sprt?.verdict === "H1";
  const doneSpan = document.createElement("span");
  doneSpan.id = "games-done";
  doneSpan.textContent = String(done);
  const totalSpan = document.createElement("span");
  totalSpan.id = "games-total";
  totalSpan.textContent = String(total);
  const text = document.getElementById("progress-text");
  if (decided) {
    text.replaceChildren("decided after ", doneSpan, " games (at most ", totalSpan, ")");
  } else {
    text.replaceChildren(doneSpan, " of ", totalSpan, " games played");
  }
  const bar = document.getElementById("progress");
  bar.max = decided && done > 0 ? done : total;
  bar.value = done;
  const badge = document.getElementById("status");
  badge.textContent = status;
  badge.className = `status status-${status}`;
  root.dataset.status = status;
}

function gameItem(game) {
  const item = document.createElement("li");
  item.dataset.index = String(game.index);
  item.value = game.index + 1;
  const link = document.createElement("a");
  link.href = `/matches/${encodeURIComponent(game.match_id)}`;
  setBreakable(link, `${displayName(game.first)} vs ${displayName(game.second)}`);
  const meta = document.createElement("span");
  meta.className = "meta";
  if (game.result === null || game.result === undefined) {
    meta.textContent = "playing";
  } else {
    const score = `${number(game.result)}\u2013${number(1 - game.result)}`;
    meta.textContent = game.reason ? `${score}, ${game.reason}` : score;
  }
  item.append(link, " ", meta);
  return item;
}

function drawGame(game) {
  const list = document.getElementById("games");
  const item = gameItem(game);
  const old = list.querySelector(`li[data-index="${game.index}"]`);
  if (old) {
    old.replaceWith(item);
  } else {
    const after = [...list.children].find((li) => Number(li.dataset.index) > game.index);
    list.insertBefore(item, after ?? null);
  }
  document.getElementById("games-empty").hidden = true;
}

function signed(value, digits) {
  // Python's "%+.Nf", as the template writes it.
  const text = Math.abs(value).toFixed(digits);
  return `${value < 0 ? "-" : "+"}${text}`;
}

function fixed(value, digits) {
  return Number(value).toFixed(digits);
}

function setText(id, text) {
  const element = document.getElementById(id);
  if (element) element.textContent = text;
}

function eloText(elo) {
  if (!elo) return "after the first pair";
  if (elo.elo === null) return "unbounded";
  const lower = elo.lower === null ? "\u2212\u221e" : signed(elo.lower, 0);
  const upper = elo.upper === null ? "+\u221e" : signed(elo.upper, 0);
  const nelo = elo.nelo === null ? "" : `, nElo ${signed(elo.nelo, 0)}`;
  return `${signed(elo.elo, 0)} (${lower} to ${upper})${nelo}`;
}

function verdictText(sprt, section) {
  const elo0 = section.dataset.elo0;
  const elo1 = section.dataset.elo1;
  if (sprt.verdict === "H1") {
    return `H1 accepted: the first bot is stronger by ${elo1} Elo rather than ${elo0}.`;
  }
  if (sprt.verdict === "H0") {
    return `H0 accepted: the first bot is not stronger by ${elo1} Elo (rather ${elo0}).`;
  }
  if (sprt.verdict === "inconclusive") {
    return `Inconclusive: the cap of ${sprt.max_pairs} pairs came first.`;
  }
  return "No verdict yet.";
}

function drawSprt(sprt) {
  // The test's state as the template draws it: the LLR's place on the bar (its bounds at the
  // ends), the figures and the verdict.
  const section = document.getElementById("sprt-section");
  if (!section || !sprt) return;
  const low = sprt.lower_bound;
  const high = sprt.upper_bound;
  const clamped = Math.min(Math.max(sprt.llr, low), high);
  const x = 20 + ((clamped - low) / (high - low)) * 460;
  document.getElementById("sprt-marker")?.setAttribute("cx", x.toFixed(1));
  setText("sprt-llr", fixed(sprt.llr, 2));
  setText("sprt-lower", fixed(low, 2));
  setText("sprt-upper", fixed(high, 2));
  setText("sprt-pairs", String(sprt.pairs));
  setText("sprt-max-pairs", String(sprt.max_pairs));
  setText("sprt-pentanomial", sprt.pentanomial.join(", "));
  setText("sprt-games", `+${sprt.wins} =${sprt.draws} \u2212${sprt.losses}`);
  setText("sprt-elo", eloText(sprt.elo));
  const verdict = document.getElementById("sprt-verdict");
  if (verdict) {
    verdict.textContent = verdictText(sprt, section);
    verdict.className = `verdict verdict-${sprt.verdict ?? "none"}`;
  }
  section.dataset.pairs = String(sprt.pairs);
}

function drawState(state) {
  drawProgress(state.games_done, state.games_total, state.status, state.sprt);
  drawPoints(state.standings.points);
  drawSprt(state.sprt);
  for (const game of state.games) drawGame(game);
}

async function renderedNow() {
  // The page as the server renders it now, parsed (never inserted whole); null if unreachable.
  try {
    const response = await fetch(location.pathname, { headers: { Accept: "text/html" } });
    if (!response.ok) return null;
    return new DOMParser().parseFromString(await response.text(), "text/html");
  } catch {
    return null;
  }
}

function swap(id, page) {
  // Put the server's element `id` of `page` in place of the page's own, keeping the focus on
  // the same link when it was in it.
  const old = document.getElementById(id);
  const fresh = page.getElementById(id);
  if (!old || !fresh) return;
  const focused = document.activeElement;
  const href = old.contains(focused) && focused.getAttribute("href");
  old.replaceWith(document.adoptNode(fresh));
  if (href) {
    const again = [...fresh.querySelectorAll("a[href]")].find((a) => a.getAttribute("href") === href);
    if (again) again.focus();
  }
}

let finalShown = false;
let refreshing = false;
let refreshAgain = false;

async function refreshRatings() {
  // The Elo and the crosstable after a game: one request at a time, and one more if games
  // ended meanwhile; an answer that comes after the final page was shown is dropped.
  if (refreshing) {
    refreshAgain = true;
    return;
  }
  refreshing = true;
  do {
    refreshAgain = false;
    const page = await renderedNow();
    if (page && !finalShown) {
      swap("elo-section", page);
      swap("crosstable-section", page);
    }
  } while (refreshAgain && !finalShown);
  refreshing = false;
}

async function drawFinal() {
  const page = await renderedNow();
  // Without an answer the live standings stay; a reload shows the rest.
  if (!page) return;
  finalShown = true;
  swap("tournament", page);
}

function watch(id) {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(`${scheme}://${location.host}/ws/tournaments/${encodeURIComponent(id)}`);
  let ended = false;
  socket.addEventListener("open", () => {
    socket.send(JSON.stringify({ type: "hello", protocol_version: PROTOCOL_VERSION, client: "arena-web" }));
  });
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(event.data);
    if (message.type === "tournament_state") {
      // Games that ended before this connection (the page was rendered earlier, or the
      // socket was down) are in the ratings only if the page was drawn after them.
      if (message.games_done !== renderedDone) refreshRatings();
      renderedDone = message.games_done;
      drawState(message);
      root.dataset.watching = "true";
      if (ENDED.has(message.status)) ended = true;
    } else if (message.type === "tournament_game_finished") {
      drawGame(message.game);
      drawProgress(message.games_done, message.games_total, "running", message.sprt);
      drawPoints(message.points);
      drawSprt(message.sprt);
      renderedDone = message.games_done;
      refreshRatings();
    } else if (message.type === "tournament_finished") {
      ended = true;
      drawProgress(message.games_done, message.games_total, "finished", message.sprt);
      drawPoints(message.standings.points);
      drawSprt(message.sprt);
      socket.close();
      drawFinal();
    }
  });
  socket.addEventListener("close", () => {
    if (!ended && !document.hidden) setTimeout(() => watch(id), RETRY_MS);
  });
}

let renderedDone = root ? Number(document.getElementById("games-done").textContent) : 0;
if (root && !ENDED.has(root.dataset.status)) watch(root.dataset.tournamentId);
