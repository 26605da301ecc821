// The match page: the board drawn from the position text, the move list, both clocks, the
// status, live from the spectator WebSocket (/ws/matches/{id}), and a replay of the moves
// (buttons, arrow keys). The page is rendered on the server with every move and the position
// after it; this script only draws and follows, with text nodes only (a name is never markup).
// The move list follows the game (its newest move scrolled into view) unless the viewer
// scrolled it back; the end is worded as the server words it (server/web/results.py), from
// the table of words the page carries.

import { drawBoard } from "./board.js";
import { setBreakable } from "./names.js";

const PROTOCOL_VERSION = "1.2";
const RECONNECT_MS = 2000;

const article = document.getElementById("match");
const boardBox = document.getElementById("board");
const positionText = document.getElementById("position-text");
const plyText = document.getElementById("ply-text");
const moveList = document.getElementById("moves");
const movesEmpty = document.getElementById("moves-empty");
const statusText = document.getElementById("status");
const connection = document.getElementById("connection");
const numbers = document.getElementById("show-numbers");

const game = article.dataset.game;
const matchId = article.dataset.matchId;
const resultWords = JSON.parse(article.dataset.resultWords || "{}");
const yourSeat = article.dataset.yourSeat === undefined ? null : Number(article.dataset.yourSeat);
function seatLabel(seat) {
  // As the template's seat_name: a player, a house bot, an invited player, or an open seat.
  if (seat.player) return seat.player;
  if (seat.bot) return `${seat.bot} (${seat.bot.startsWith("hosted:") ? "hosted" : "house"} bot)`;
  if (seat.challenged) return `${seat.challenged} (invited)`;
  return "open seat";
}

function setSeats(seats) {
  // A seat taken while the page is open (the match_state that follows match_started).
  for (const seat of [0, 1]) {
    const label = seatLabel(seats[seat]);
    setBreakable(document.querySelector(`#clock-${seat} .name`), label);
    setBreakable(document.getElementById(`title-${seat}`), label);
  }
}

function seatName(seat) {
  return document.querySelector(`#clock-${seat} .name`).textContent;
}

// The positions: index 0 the start, index n after move n (null: not known to this page).
const positions = [moveList.dataset.startPosition];
const moves = [null];
for (const item of moveList.children) {
  positions.push(item.dataset.position);
  moves.push(item.querySelector(".move").textContent);
}
let shown = positions.length - 1;
let status = article.dataset.status;

// The move list's own scrolling ---------------------------------------------------------------

function listAtEnd() {
  // The list shows its last item (within a few pixels): nobody scrolled it back.
  return moveList.scrollHeight - moveList.scrollTop - moveList.clientHeight < 4;
}

function keepInList(item) {
  // Scroll the list (not the page) just enough to show `item`.
  if (!item) return;
  const box = moveList.getBoundingClientRect();
  const rect = item.getBoundingClientRect();
  if (rect.top < box.top) moveList.scrollTop -= box.top - rect.top;
  else if (rect.bottom > box.bottom) moveList.scrollTop += rect.bottom - box.bottom;
}

// Board and replay -----------------------------------------------------------------------------

function show(ply) {
  shown = Math.max(0, Math.min(ply, positions.length - 1));
  const position = positions[shown];
  boardBox.replaceChildren();
  if (position !== null) {
    const board = drawBoard(game, position, {
      lastMove: moves[shown],
      previous: shown > 0 ? positions[shown - 1] : null,
      numbers: Boolean(numbers && numbers.checked),
      flipped: article.dataset.flipped === "true",
    });
    if (board) boardBox.append(board);
  }
  plyText.textContent = shown === 0 ? "Start position" : `After move ${shown}, ${moves[shown]}`;
  positionText.textContent = position === null ? "not known to this page: reload it" : position;
  [...moveList.children].forEach((item, index) => {
    if (index + 1 === shown) item.setAttribute("aria-current", "step");
    else item.removeAttribute("aria-current");
  });
  document.getElementById("replay-first").disabled = shown === 0;
  document.getElementById("replay-back").disabled = shown === 0;
  document.getElementById("replay-forward").disabled = shown === positions.length - 1;
  document.getElementById("replay-last").disabled = shown === positions.length - 1;
  // Play mode (play.js) marks the squares to click, on the latest position only.
  article.dispatchEvent(new CustomEvent("arena:shown", { detail: { latest: shown === positions.length - 1 } }));
}

function step(where) {
  const last = positions.length - 1;
  const targets = { first: 0, back: shown - 1, forward: shown + 1, last };
  show(targets[where]);
  // The move shown is kept in view in the list (the start: its top).
  if (shown === 0) moveList.scrollTop = 0;
  else keepInList(moveList.children[shown - 1]);
}

for (const where of ["first", "back", "forward", "last"]) {
  document.getElementById(`replay-${where}`).addEventListener("click", () => step(where));
}

const KEYS = { ArrowLeft: "back", ArrowRight: "forward", Home: "first", End: "last" };
document.addEventListener("keydown", (event) => {
  const where = KEYS[event.key];
  const typing = event.target instanceof HTMLInputElement && event.target.type !== "checkbox";
  if (!where || typing || event.altKey || event.ctrlKey || event.metaKey) return;
  event.preventDefault();
  step(where);
});

if (numbers) numbers.addEventListener("change", () => show(shown));

// Moves ------------------------------------------------------------------------------------

function addMove(ply, seat, move, position, elapsedText = "") {
  // A move already listed (seen in the page and again in the socket's match_state) is kept.
  if (ply < positions.length) {
    if (position !== null) positions[ply] = position;
    return;
  }
  const followed = shown === positions.length - 1;
  while (positions.length < ply) {
    // Moves played between the page's rendering and the socket's first state.
    positions.push(null);
    moves.push(null);
  }
  positions.push(position);
  moves.push(move);
  const item = document.createElement("li");
  item.dataset.ply = String(ply);
  item.dataset.seat = String(seat);
  const swatch = document.createElement("span");
  swatch.className = `swatch seat-${seat}`;
  swatch.setAttribute("aria-hidden", "true");
  const text = document.createElement("span");
  text.className = "move";
  text.textContent = move;
  item.append(swatch, text);
  if (elapsedText) {
    const meta = document.createElement("span");
    meta.className = "meta";
    meta.textContent = elapsedText;
    item.append(" ", meta);
  }
  moveList.append(item);
  movesEmpty.hidden = true;
  // Someone stepping back through the moves keeps their place; otherwise the board follows.
  show(followed ? positions.length - 1 : shown);
}

async function fillUnknownPositions() {
  // Moves that came in a match_state (played before the socket connected, or while it was
  // down) arrive without the positions between them: the page as the server renders it now
  // has them all. Parsed, never inserted: only the positions' text is read.
  if (!positions.includes(null)) return;
  try {
    const response = await fetch(location.pathname, { headers: { Accept: "text/html" } });
    if (!response.ok) return;
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    for (const item of fresh.querySelectorAll("#moves li[data-ply]")) {
      const ply = Number(item.dataset.ply);
      if (ply < positions.length && positions[ply] === null) positions[ply] = item.dataset.position;
    }
    show(shown);
  } catch {
    // The server is restarting: the board says to reload for these positions.
  }
}

// Clocks ----------------------------------------------------------------------------------

let clocks = null; // {remaining: [ms, ms], running: seat|null, at: performance.now()}

function clockText(ms) {
  const tenths = Math.floor(Math.max(0, ms) / 100);
  const minutes = Math.floor(tenths / 600);
  const seconds = String(Math.floor(tenths / 10) % 60).padStart(2, "0");
  return `${minutes}:${seconds}.${tenths % 10}`;
}

function tick() {
  if (!clocks) return;
  const elapsed = performance.now() - clocks.at;
  for (const seat of [0, 1]) {
    const running = clocks.running === seat;
    const left = clocks.remaining[seat] - (running ? elapsed : 0);
    document.getElementById(`clock-time-${seat}`).textContent = clockText(left);
    document.getElementById(`clock-${seat}`).classList.toggle("running", running);
  }
}

function setClocks(wire) {
  if (!wire) return;
  // The time since the server measured them is counted from now: the browser's clock may
  // differ from the server's, and a message's transit is short next to a move's time.
  clocks = { remaining: wire.remaining_ms, running: wire.running, at: performance.now() };
  tick();
}

function readRenderedClocks() {
  const remaining = [0, 1].map((seat) => document.getElementById(`clock-${seat}`).dataset.remainingMs);
  if (remaining.some((ms) => ms === undefined)) return;
  const running = document.getElementById("clock-running");
  setClocks({
    remaining_ms: remaining.map(Number),
    running: running ? Number(running.dataset.seat) : null,
  });
}

// Status -----------------------------------------------------------------------------------

function setToMove(seat) {
  for (const s of [0, 1]) document.getElementById(`clock-${s}`).classList.toggle("to-move", s === seat);
  if (status === "active" && seat !== null) statusText.textContent = `${seatName(seat)} to move`;
}

function sideTitle(seat) {
  const side = document.getElementById(`clock-${seat}`).dataset.side || `seat ${seat}`;
  return side.charAt(0).toUpperCase() + side.slice(1);
}

function outcomeText(result, ended) {
  // As server/web/results.py's outcome_text: "You won by resignation" to a player, "White won
  // by resignation" to a spectator, "Drawn by agreement", "Aborted".
  if (ended === "aborted") return "Aborted";
  let who;
  if (result.winner === null) who = yourSeat === null ? "Drawn" : "You drew";
  else if (yourSeat === null) who = `${sideTitle(result.winner)} won`;
  else who = result.winner === yourSeat ? "You won" : "You lost";
  const words = (result.code && resultWords[result.code]) ?? ": {description}";
  return who + words.replace("{description}", result.description);
}

function setResult(result, ended) {
  status = ended;
  article.dataset.status = ended;
  const outcome = document.createElement("strong");
  outcome.id = "result-outcome";
  outcome.className = "outcome";
  outcome.textContent = outcomeText(result, ended);
  const detail = document.createElement("span");
  detail.id = "result-detail";
  detail.textContent =
    result.winner === null || ended === "aborted"
      ? result.description
      : `${seatName(result.winner)} beat ${seatName(1 - result.winner)}: ${result.description}`;
  statusText.replaceChildren(outcome, " ", detail);
  if (result.code) {
    const code = document.createElement("span");
    code.className = "meta";
    code.textContent = `(${result.code})`;
    statusText.append(" ", code);
  }
  setToMove(null);
  // Nothing more will come: the page stops saying "Live." and lets the socket go.
  connection.textContent = "";
  if (socket) socket.close();
}

// Live ------------------------------------------------------------------------------------

function onMessage(message) {
  // The list follows the game unless its reader scrolled it back or steps through the moves.
  const following = listAtEnd() && shown === positions.length - 1;
  handle(message);
  // Play mode (play.js) follows the same messages: whose turn, the legal moves, draw offers;
  // search.js adds each move's search statistics to its item.
  article.dispatchEvent(new CustomEvent("arena:message", { detail: message }));
  if (following) moveList.scrollTop = moveList.scrollHeight;
}

function handle(message) {
  switch (message.type) {
    case "match_state": {
      setSeats(message.seats);
      message.moves.forEach((move, index) => {
        const last = index === message.moves.length - 1;
        addMove(index + 1, (index + seatOfFirst(message)) % 2, move, last ? message.position : null);
      });
      status = message.status;
      article.dataset.status = status;
      article.dataset.seq = String(message.seq);
      setClocks(message.clocks);
      if (message.result) setResult(message.result, message.status);
      else setToMove(message.to_move);
      fillUnknownPositions();
      break;
    }
    case "move_made":
      addMove(
        message.ply,
        message.seat,
        message.move,
        message.position,
        message.elapsed_ms == null ? "" : `${(message.elapsed_ms / 1000).toFixed(1)} s`,
      );
      article.dataset.seq = String(message.seq);
      if (status === "waiting") {
        status = "active";
        article.dataset.status = status;
      }
      setClocks(message.clocks);
      setToMove(message.to_move);
      break;
    case "match_ended":
      article.dataset.seq = String(message.seq);
      setClocks(message.clocks);
      setResult(message.result, message.status);
      break;
    default:
      break;
  }
}

function seatOfFirst(state) {
  // Who played first: the seat to move after an even number of moves. Known from the page's
  // own list when it has moves; otherwise from whose turn it is now.
  const first = moveList.children[0];
  if (first) return Number(first.dataset.seat);
  if (state.to_move !== null && state.to_move !== undefined) {
    return (state.to_move + state.moves.length) % 2;
  }
  return 0;
}

let socket = null;

function connect() {
  if (status !== "active" && status !== "waiting") {
    connection.textContent = "";
    return;
  }
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}/ws/matches/${encodeURIComponent(matchId)}`);
  socket.addEventListener("open", () => {
    socket.send(JSON.stringify({ type: "hello", protocol_version: PROTOCOL_VERSION, client: "arena-web" }));
    if (status === "active" || status === "waiting") connection.textContent = "Live.";
  });
  socket.addEventListener("message", (event) => onMessage(JSON.parse(event.data)));
  socket.addEventListener("close", () => {
    if (status === "active" || status === "waiting") {
      connection.textContent = "Connection lost; reconnecting…";
      setTimeout(connect, RECONNECT_MS);
    } else {
      connection.textContent = "";
    }
  });
}

readRenderedClocks();
show(shown);
// A match opened after many moves shows its latest in the list.
moveList.scrollTop = moveList.scrollHeight;
setInterval(tick, 100);
connect();
