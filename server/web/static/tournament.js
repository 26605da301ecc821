// A tournament's page kept up to date: it watches /ws/tournaments/{id} (hello, then the
// tournament_state, a tournament_game_finished after each game and tournament_finished at the
// end) and redraws the progress, the points table and the games with text nodes only. Once the
// tournament ends it asks the server for the page again and swaps in its tournament part: the
// final Elo, crosstable and LOS are drawn by the server's templates (escaped there), and the
// page stays where it is (no reload, no lost focus or scroll).

const PROTOCOL_VERSION = "1.1";
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
    header.textContent = bot;
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

function drawProgress(done, total, status) {
  document.getElementById("games-done").textContent = String(done);
  document.getElementById("games-total").textContent = String(total);
  const bar = document.getElementById("progress");
  bar.max = total;
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
  link.textContent = `${displayName(game.first)} vs ${displayName(game.second)}`;
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

function drawState(state) {
  drawProgress(state.games_done, state.games_total, state.status);
  drawPoints(state.standings.points);
  for (const game of state.games) drawGame(game);
}

async function drawFinal() {
  try {
    const response = await fetch(location.pathname, { headers: { Accept: "text/html" } });
    if (!response.ok) return;
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = page.getElementById("tournament");
    if (fresh) root.replaceWith(document.adoptNode(fresh));
  } catch {
    // The live standings stay; a reload shows the rest.
  }
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
      drawState(message);
      root.dataset.watching = "true";
      if (ENDED.has(message.status)) ended = true;
    } else if (message.type === "tournament_game_finished") {
      drawGame(message.game);
      drawProgress(message.games_done, message.games_total, "running");
      drawPoints(message.points);
    } else if (message.type === "tournament_finished") {
      ended = true;
      drawProgress(message.games_done, message.games_total, "finished");
      drawPoints(message.standings.points);
      socket.close();
      drawFinal();
    }
  });
  socket.addEventListener("close", () => {
    if (!ended && !document.hidden) setTimeout(() => watch(id), RETRY_MS);
  });
}

if (root && !ENDED.has(root.dataset.status)) watch(root.dataset.tournamentId);
