// Play mode of the match page: the browser's guest holds a seat. The legal moves come from
// the server (rendered in the page, then each `match_state` and `move_made` of the spectator
// WebSocket, which match.js passes on as "arena:message" events); the board's squares,
// columns, cells or heaps that start or continue a legal move are highlighted and take clicks
// (and Enter, for keyboard users), a checkers move square by square (every square of a
// multi-jump). Moves and actions are posted to the match's own routes (/matches/{id}/...),
// which take the browser's cookie as a bot's token; a refusal (4xx) is shown beside the
// board with the server's own message.

const article = document.getElementById("match");
const panel = document.getElementById("play");
const boardBox = document.getElementById("board");
const turnText = document.getElementById("play-turn");
const selectionText = document.getElementById("play-selection");
const errorBox = document.getElementById("play-error");
const moveForm = document.getElementById("move-form");
const moveText = document.getElementById("move-text");
const legalList = document.getElementById("legal-moves");
const nimForm = document.getElementById("nim-take");
const nimCount = document.getElementById("nim-count");
const nimHeapText = document.getElementById("nim-heap");

const game = article.dataset.game;
const matchId = article.dataset.matchId;
const yourSeat = Number(panel.dataset.yourSeat);
const base = `/matches/${encodeURIComponent(matchId)}`;

function seatOrNull(text) {
  return text === "" || text === undefined || text === null ? null : Number(text);
}

// What the page knows of the match (the latest event), and what the player has chosen so far.
const state = {
  seq: Number(panel.dataset.seq),
  ply: document.querySelectorAll("#moves li").length,
  status: article.dataset.status,
  toMove: seatOrNull(panel.dataset.toMove),
  legal: panel.dataset.legalMoves ? panel.dataset.legalMoves.split(" ") : [],
  drawOffer: seatOrNull(panel.dataset.drawOffer),
};
let latestShown = true; // the board shows the latest position (not a replayed one)
let path = []; // checkers: the squares clicked so far
let nimHeap = null; // Nim: the heap chosen
let busy = false; // a request is on its way

function isLive() {
  return state.status === "active" || state.status === "waiting";
}

function isYourTurn() {
  return state.status === "active" && state.toMove === yourSeat && !busy;
}

function sideName(seat) {
  const side = document.querySelector(`#clock-${seat} .meta`);
  return side ? side.textContent.replace(/[()]/g, "") : `seat ${seat}`;
}

function seatName(seat) {
  return document.querySelector(`#clock-${seat} .name`).textContent;
}

// The legal moves, read per game ---------------------------------------------------------

function checkersMoves() {
  return state.legal.map((text) => ({ text, squares: text.split(/[-x]/).map(Number) }));
}

function checkersCandidates() {
  // The legal moves that begin with the squares clicked so far.
  return checkersMoves().filter((move) => path.every((square, i) => move.squares[i] === square));
}

function nimMoves() {
  return state.legal.map((text) => {
    const [heap, count] = text.split(":").map(Number);
    return { text, heap, count };
  });
}

function targets() {
  // The board's clickable things now: a map from the hit's data value to its label.
  const found = new Map();
  if (!isYourTurn() || !latestShown) return found;
  if (game === "checkers") {
    if (path.length === 0) {
      for (const move of checkersMoves()) found.set(String(move.squares[0]), `move from square ${move.squares[0]}`);
    } else {
      for (const move of checkersCandidates()) {
        const next = move.squares[path.length];
        if (next !== undefined) found.set(String(next), `to square ${next}`);
      }
    }
  } else if (game === "connect4") {
    for (const text of state.legal) found.set(text, `drop in column ${text}`);
  } else if (game === "tictactoe") {
    for (const text of state.legal) found.set(text, `mark cell ${text}`);
  } else if (game === "nim") {
    for (const move of nimMoves()) found.set(String(move.heap), `take from heap ${move.heap}`);
  }
  return found;
}

const HIT_KEYS = { checkers: "square", connect4: "column", tictactoe: "cell", nim: "heap" };

// Drawing ------------------------------------------------------------------------------------

function decorate() {
  // Mark the board's targets (and a checkers move's squares chosen so far): match.js redraws
  // the board on every event, so this runs after each drawing.
  const key = HIT_KEYS[game];
  const found = targets();
  // With buttons in it, the drawing is a group (the children of an image are not read).
  const svg = boardBox.querySelector("svg");
  if (svg) svg.setAttribute("role", found.size > 0 ? "group" : "img");
  if (game === "connect4") {
    // The hole a disc dropped in each playable column lands in: ringed in the player's colour
    // (the column itself takes the click; a tint over it would colour its empty holes).
    const lowest = new Map();
    for (const hole of boardBox.querySelectorAll("circle.hole")) {
      hole.classList.remove("landing", "seat-0", "seat-1");
      const column = hole.dataset.column;
      const row = Number(hole.dataset.row);
      if (found.has(column) && (!lowest.has(column) || row < Number(lowest.get(column).dataset.row))) {
        lowest.set(column, hole);
      }
    }
    for (const hole of lowest.values()) hole.classList.add("landing", `seat-${yourSeat}`);
  }
  for (const hit of boardBox.querySelectorAll("rect.hit")) {
    const value = hit.dataset[key];
    const label = found.get(value);
    const chosen = game === "checkers" && path.map(String).includes(value);
    const selectedHeap = game === "nim" && nimHeap !== null && String(nimHeap) === value;
    hit.classList.toggle("target", label !== undefined);
    hit.classList.toggle("selected", (chosen || selectedHeap) && latestShown);
    if (label !== undefined || (chosen && path.length === 1)) {
      hit.setAttribute("tabindex", "0");
      hit.setAttribute("role", "button");
      hit.setAttribute("aria-label", label || `square ${value}: chosen, click again to let go`);
    } else {
      hit.removeAttribute("tabindex");
      hit.removeAttribute("role");
      hit.removeAttribute("aria-label");
    }
  }
}

function render() {
  const yours = isYourTurn();
  let turn;
  if (!isLive()) turn = "over";
  else if (state.status === "waiting") turn = "waiting";
  else if (busy) turn = "sending";
  else turn = state.toMove === yourSeat ? "you" : "opponent";
  panel.dataset.turn = turn;
  panel.dataset.seq = String(state.seq);
  const side = sideName(yourSeat);
  // match.js words the end (#result-outcome) before this runs; the referee runs the first
  // mover's clock from the start of the match, which a person may not expect.
  const outcome = document.getElementById("result-outcome");
  const timed = document.getElementById("clock-0").dataset.remainingMs !== undefined;
  const firstMove = timed && state.ply === 0 ? "; your clock runs from the start of the match" : "";
  turnText.textContent = {
    over: outcome ? `${outcome.textContent}.` : `The match is over (you played ${side}).`,
    waiting: "Waiting for the other seat to be taken.",
    sending: "Sending your move…",
    you: `Your move: you play ${side}${firstMove}.`,
    opponent: `Waiting for ${seatName(1 - yourSeat)} to move (you play ${side}).`,
  }[turn];
  if (game === "checkers" && path.length > 0) {
    const capture = checkersCandidates().some((move) => move.text.includes("x"));
    selectionText.textContent = `Chosen: ${path.join(capture ? "x" : "-")}; click the next square (or the first again to let go).`;
  } else {
    selectionText.textContent = "";
  }
  legalList.replaceChildren(
    ...(yours ? state.legal : []).map((text) => {
      const option = document.createElement("option");
      option.value = text;
      return option;
    }),
  );
  document.getElementById("play-controls").hidden = !isLive();
  for (const control of moveForm.elements) control.disabled = busy;
  if (nimForm) {
    nimForm.hidden = !(yours && nimHeap !== null);
    const most = Math.max(0, ...nimMoves().filter((m) => m.heap === nimHeap).map((m) => m.count));
    nimCount.max = String(most);
    nimHeapText.textContent = nimHeap === null ? "" : String(nimHeap);
  }
  const opponent = 1 - yourSeat;
  const active = state.status === "active";
  document.getElementById("play-resign").hidden = !active;
  if (!active) document.getElementById("resign-confirm").hidden = true;
  document.getElementById("play-offer-draw").hidden = !active || state.drawOffer !== null;
  document.getElementById("draw-offered").hidden = !active || state.drawOffer !== opponent;
  document.getElementById("draw-pending").hidden = !active || state.drawOffer !== yourSeat;
  document.getElementById("play-abort").hidden = !isLive() || state.ply > 0;
  document.getElementById("rematch-form").hidden = state.status !== "finished";
  decorate();
}

function showError(text) {
  errorBox.replaceChildren();
  if (text) {
    const line = document.createElement("p");
    line.textContent = text;
    errorBox.append(line);
  }
  errorBox.hidden = !text;
}

// Following the match ------------------------------------------------------------------------

function follow(message) {
  // Take in an event of the match; an event older than what the page knows changes nothing.
  if (message.type === "match_state") {
    if (message.seq < state.seq) return;
    state.ply = message.moves.length;
    state.status = message.status;
    state.toMove = message.to_move;
    state.legal = message.legal_moves;
    state.drawOffer = message.draw_offer ?? null;
  } else if (message.type === "move_made") {
    if (message.seq <= state.seq) return;
    state.ply = message.ply;
    state.status = "active";
    state.toMove = message.to_move;
    state.legal = message.legal_moves;
    // A move answers the opponent's offer (declined); the mover's own offer stands.
    if (state.drawOffer === 1 - message.seat) state.drawOffer = null;
  } else if (message.type === "draw_offered" || message.type === "draw_declined") {
    if (message.seq <= state.seq) return;
    state.drawOffer = message.type === "draw_offered" ? message.seat : null;
  } else if (message.type === "match_ended") {
    state.status = message.status;
    state.toMove = null;
    state.legal = [];
  } else {
    return;
  }
  if (message.seq !== state.seq) {
    path = [];
    nimHeap = null;
  }
  state.seq = Math.max(state.seq, message.seq);
  render();
}

article.addEventListener("arena:message", (event) => follow(event.detail));
article.addEventListener("arena:shown", (event) => {
  latestShown = event.detail.latest;
  decorate();
});

// Sending ------------------------------------------------------------------------------------

async function post(action, body) {
  // Post to the match's route by the cookie, in the page's protocol version (REST answers
  // 1.0 to a request naming none); return the answer's JSON, or null after showing the refusal.
  busy = true;
  render();
  try {
    const response = await fetch(`${base}/${action}`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        Accept: "application/json",
        "Arena-Protocol-Version": article.dataset.protocolVersion,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
    });
    let answer = null;
    try {
      answer = await response.json();
    } catch {
      answer = null;
    }
    if (response.ok) {
      showError("");
      return answer;
    }
    const code = answer && answer.code ? ` (${answer.code})` : "";
    const why = answer && answer.message ? answer.message : `the server answered ${response.status}`;
    showError(`Refused: ${why}${code}`);
    return null;
  } catch {
    showError("The server cannot be reached; try again in a moment.");
    return null;
  } finally {
    busy = false;
    render();
  }
}

async function play(text) {
  path = [];
  nimHeap = null;
  const answer = await post("moves", { move: text, expected_seq: state.seq });
  if (answer) {
    moveText.value = "";
    follow(answer);
  }
}

async function act(action) {
  const answer = await post(action);
  if (answer) follow(answer);
}

function choose(value) {
  // A click (or Enter) on the board's thing `value`: a square, column, cell or heap.
  if (!isYourTurn() || !latestShown) return;
  showError("");
  if (game === "checkers") {
    const square = Number(value);
    if (path.length === 1 && path[0] === square) {
      path = [];
    } else if (targets().has(value)) {
      path.push(square);
      const done = checkersCandidates().filter((move) => move.squares.length === path.length);
      const longer = checkersCandidates().filter((move) => move.squares.length > path.length);
      if (done.length > 0 && longer.length === 0) {
        play(done[0].text);
        return;
      }
    } else if (checkersMoves().some((move) => move.squares[0] === square)) {
      path = [square]; // another piece to move: start again from it
    } else {
      return;
    }
    render();
  } else if (game === "nim") {
    if (!targets().has(value)) return;
    nimHeap = Number(value);
    render();
    nimCount.value = "1";
    nimCount.focus();
  } else if (targets().has(value)) {
    play(value);
  }
}

boardBox.addEventListener("click", (event) => {
  const hit = event.target.closest && event.target.closest("rect.hit");
  if (hit) choose(hit.dataset[HIT_KEYS[game]]);
});
boardBox.addEventListener("keydown", (event) => {
  const hit = event.target.closest && event.target.closest("rect.hit");
  if (!hit || (event.key !== "Enter" && event.key !== " ")) return;
  event.preventDefault();
  const value = hit.dataset[HIT_KEYS[game]];
  choose(value);
  // Keep the keyboard where it was: the board was redrawn under it.
  const again = boardBox.querySelector(`rect.hit[data-${HIT_KEYS[game]}="${value}"]`);
  if (again && again.getAttribute("tabindex") === "0") again.focus();
});

moveForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const text = moveText.value.trim();
  if (!text) {
    showError("Type a move first: " + document.getElementById("move-hint").textContent);
    return;
  }
  play(text);
});

if (nimForm) {
  nimForm.addEventListener("submit", (event) => {
    event.preventDefault();
    if (nimHeap !== null) play(`${nimHeap}:${nimCount.value}`);
  });
}

const resignConfirm = document.getElementById("resign-confirm");
document.getElementById("play-resign").addEventListener("click", () => {
  resignConfirm.hidden = false;
  document.getElementById("play-resign-yes").focus();
});
document.getElementById("play-resign-no").addEventListener("click", () => {
  resignConfirm.hidden = true;
  document.getElementById("play-resign").focus();
});
document.getElementById("play-resign-yes").addEventListener("click", () => {
  resignConfirm.hidden = true;
  act("resign");
});
document.getElementById("play-offer-draw").addEventListener("click", () => act("offer-draw"));
document.getElementById("play-accept-draw").addEventListener("click", () => act("accept-draw"));
document.getElementById("play-decline-draw").addEventListener("click", () => act("decline-draw"));
document.getElementById("play-abort").addEventListener("click", () => act("abort"));

render();
