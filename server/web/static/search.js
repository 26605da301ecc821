// The search statistics of the match page: each move's depth, nodes and score in the move
// list, the statistics of the move shown in a panel, and the score graph. The server renders
// them (templates/search_stats.html, server/web/plots.py); this script keeps them up to date
// from the messages match.js receives (the "arena:message" event of #match: a move_made in
// protocol 1.2 carries its `search`) and redraws the graph with the same geometry as
// plots.score_plot. Text nodes only: a bot's PV is never markup.

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 600;
const HEIGHT = 240;
const MARGIN = 10;
const OUTCOME_VALUES = { win: 1, draw: 0, loss: -1 };

const article = document.getElementById("match");
const moveList = document.getElementById("moves");
const detailMove = document.getElementById("search-move");
const rowsBox = document.getElementById("search-rows");
const figure = document.getElementById("score-figure");
const graph = document.getElementById("score-graph");
const line = document.getElementById("score-line");
const pointsBox = document.getElementById("score-points");
const graphEmpty = document.getElementById("score-graph-empty");

function searchOf(item) {
  const text = item.dataset.search;
  if (!text || text === "null") return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function count(n) {
  return Number(n).toLocaleString("en-US");
}

// As plots.score_text: `+35`, `-0.39`, `win in 5`, `draw`.
function scoreText(search) {
  if (search.outcome) {
    const plies = search.outcome_plies;
    return plies === null || plies === undefined ? search.outcome : `${search.outcome} in ${plies}`;
  }
  const score = search.score;
  if (score === null || score === undefined) return "no score";
  if (score === 0) return "0";
  const sign = score > 0 ? "+" : "";
  return Number.isInteger(score) ? `${sign}${score}` : `${sign}${score.toFixed(2)}`;
}

function summary(search) {
  return `depth ${search.depth} · ${count(search.nodes)} nodes · ${scoreText(search)}`;
}

// As plots.search_rows.
function rows(search) {
  const has = (value) => value !== null && value !== undefined;
  const found = [["Depth", has(search.seldepth) ? `${search.depth} (selective ${search.seldepth})` : String(search.depth)]];
  found.push(["Nodes", count(search.nodes)]);
  if (has(search.nps)) found.push(["Nodes per second", count(search.nps)]);
  if (has(search.time_ms)) found.push(["Search time", `${(search.time_ms / 1000).toFixed(3)} s`]);
  found.push(["Score", scoreText(search)]);
  if (search.pv && search.pv.length) found.push(["Principal variation", search.pv.join(" ")]);
  return found;
}

function setSearch(item, search) {
  item.dataset.search = search ? JSON.stringify(search) : "null";
  const old = item.querySelector(".search-summary");
  if (old) old.remove();
  if (!search) return;
  const span = document.createElement("span");
  span.className = "search-summary";
  span.textContent = summary(search);
  item.append(" ", span);
}

// The panel -----------------------------------------------------------------------------------

function showDetail() {
  const item = moveList.querySelector('li[aria-current="step"]');
  if (!item) {
    detailMove.textContent = "Start position: no move yet";
    rowsBox.hidden = true;
    rowsBox.replaceChildren();
  } else {
    const search = searchOf(item);
    const move = item.querySelector(".move").textContent;
    detailMove.textContent = `Move ${item.dataset.ply}, ${move}${search ? "" : ": no statistics reported"}`;
    rowsBox.replaceChildren();
    if (search) {
      for (const [label, value] of rows(search)) {
        const term = document.createElement("dt");
        term.textContent = label;
        const detail = document.createElement("dd");
        detail.textContent = value;
        if (label === "Principal variation") detail.className = "pv";
        rowsBox.append(term, detail);
      }
    }
    rowsBox.hidden = !search;
  }
  for (const point of pointsBox.querySelectorAll("circle")) {
    point.classList.toggle("current", Boolean(item) && point.dataset.ply === item.dataset.ply);
  }
}

// The graph (as plots.score_plot) ---------------------------------------------------------------

function round1(value) {
  return Math.round(value * 10) / 10;
}

function drawGraph() {
  const items = [...moveList.children];
  const moves = items.map((item) => ({
    ply: Number(item.dataset.ply),
    seat: Number(item.dataset.seat),
    move: item.querySelector(".move").textContent,
    search: searchOf(item),
  }));
  const scales = [0, 0];
  for (const { seat, search } of moves) {
    if (search && !search.outcome && search.score !== null && search.score !== undefined) {
      scales[seat] = Math.max(scales[seat], Math.abs(search.score));
    }
  }
  const top = MARGIN;
  const bottom = HEIGHT - MARGIN;
  const left = MARGIN;
  const right = WIDTH - MARGIN;
  const middle = (top + bottom) / 2;
  const last = Math.max(moves.length - 1, 1);
  const points = [];
  moves.forEach(({ ply, seat, move, search }, index) => {
    if (!search) return;
    let value;
    if (search.outcome) value = OUTCOME_VALUES[search.outcome];
    else if (search.score === null || search.score === undefined) return;
    else value = Math.max(-1, Math.min(1, search.score / (scales[seat] || 1)));
    const firstView = seat === 0 ? value : -value;
    points.push({
      ply,
      seat,
      x: round1(left + (index / last) * (right - left)),
      y: round1(middle - (firstView * (bottom - top)) / 2),
      proven: Boolean(search.outcome),
      label: `${ply}. ${move}: ${scoreText(search)}`,
    });
  });
  line.setAttribute("points", points.map((p) => `${p.x},${p.y}`).join(" "));
  const circles = points.map((p) => {
    const circle = document.createElementNS(SVG, "circle");
    circle.setAttribute("class", `score-point seat-${p.seat}${p.proven ? " proven" : ""}`);
    circle.dataset.ply = String(p.ply);
    circle.setAttribute("cx", String(p.x));
    circle.setAttribute("cy", String(p.y));
    circle.setAttribute("r", "5");
    const title = document.createElementNS(SVG, "title");
    title.textContent = p.label;
    circle.append(title);
    return circle;
  });
  pointsBox.replaceChildren(...circles);
  graph.dataset.plies = String(moves.length);
  figure.hidden = points.length === 0;
  graphEmpty.hidden = points.length > 0;
}

function refresh() {
  drawGraph();
  showDetail();
}

// Live ----------------------------------------------------------------------------------------

async function fillFromRecord() {
  // Moves a match_state brought (played while the socket was down) come without their
  // statistics: the record has them all.
  try {
    const response = await fetch(`/matches/${encodeURIComponent(article.dataset.matchId)}/record`, {
      headers: { Accept: "application/json", "Arena-Protocol-Version": "1.2" },
    });
    if (!response.ok) return;
    const record = await response.json();
    for (const move of record.moves) {
      const item = moveList.querySelector(`li[data-ply="${move.ply}"]`);
      if (item && item.dataset.search === undefined) setSearch(item, move.search);
    }
    refresh();
  } catch {
    // The server is restarting: the next match_state tries again.
  }
}

article.addEventListener("arena:message", (event) => {
  const message = event.detail;
  if (message.type === "move_made") {
    const item = moveList.querySelector(`li[data-ply="${message.ply}"]`);
    if (item && item.dataset.search === undefined) {
      setSearch(item, message.search || null);
      refresh();
    }
  } else if (message.type === "match_state") {
    if ([...moveList.children].some((item) => item.dataset.search === undefined)) fillFromRecord();
  }
});

// The move shown changes with the replay (match.js marks it aria-current) or a new move.
new MutationObserver(showDetail).observe(moveList, {
  subtree: true,
  childList: true,
  attributes: true,
  attributeFilter: ["aria-current"],
});

refresh();
