// The search-tree explorer (/explore): play into a position, trace a search on it
// (POST /explore/trace answers with every node in visit order), then step through the search
// node by node: Next, Back, Run (animated, pausable), First, Last, and the same by keyboard.
// The tree is drawn the way the lectures (and bots/trace/draw.py) draw it: MAX nodes as
// triangles up, MIN down, leaves as boxes, the visit order, the window on entry, the value
// once the node has returned, cut-offs with the children never searched greyed and barred.
// Values are written as tracedraw writes them (format_value, node_value): the tests compare.

import { drawBoard } from "/static/board.js";

const NS = "http://www.w3.org/2000/svg";
const WIN = 1000000;
const FULL_TREE = 250; // larger trees show the path to the current node, the rest folded
const Y_STEP = 96;
const MARGIN_X = 70;
const TOP = 40;
const S = 17;
const STUBS = 3;
const KINDS = { inner: "inner", leaf: "leaf", terminal: "game over", table: "ended by the table" };

const $ = (id) => document.getElementById(id);
const form = $("explore-form");
const gameSelect = $("explore-game");
const positionInput = $("explore-position");
const boardBox = $("explore-board");
const legalBox = $("explore-legal");
const movesText = $("explore-moves");
const turnText = $("explore-turn");
const errorBox = $("explore-error");
const searchSelect = $("explore-search");
const section = $("trace");
const svg = $("tree");
const treeBox = $("tree-box");
const runButton = $("step-run");

// What is being explored: the position (start text, moves played) and the trace's steps.
const position = { game: gameSelect.value, start: null, moves: [], answer: null };
let traced = null; // the trace (the route's JSON)
let sizes = []; // each node's subtree size
let step = 0; // the current node (visit index)
let timer = null; // the Run animation

// Values, as bots/trace/draw.py writes them --------------------------------------------------

export function formatValue(value, scoring = "engine") {
  if (value === "inf") return "∞";
  if (value === "-inf") return "-∞";
  if (scoring === "engine" && Math.abs(value) >= WIN - 10000) {
    const plies = Math.round(WIN - Math.abs(value));
    return value > 0 ? `W${plies}` : `L${plies}`;
  }
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) < 1000 ? String(Number(value.toPrecision(3))) : value.toFixed(0);
}

function nodeValue(node) {
  const text = formatValue(node.value, traced.scoring);
  if (!node.cutoff) return text;
  const atLeast = traced.perspective === "negamax" || node.side === "max";
  return (atLeast ? "≥" : "≤") + text;
}

function windowText(alpha, beta, open = "⟨", close = "⟩") {
  return `${open}${formatValue(alpha)}, ${formatValue(beta)}${close}`;
}

function hasWindow() {
  return traced.search !== "minimax" && traced.search !== "minimax_prune";
}

// Requests ------------------------------------------------------------------------------------

function showError(text) {
  errorBox.replaceChildren();
  if (text) {
    const p = document.createElement("p");
    p.textContent = text;
    errorBox.append(p);
  }
  errorBox.hidden = !text;
  if (text) errorBox.scrollIntoView({ block: "nearest" });
}

async function post(path, body) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    body: JSON.stringify(body),
  });
  let answer = null;
  try {
    answer = await response.json();
  } catch {
    answer = null;
  }
  if (!response.ok) {
    const message = answer && answer.message ? `${answer.code}: ${answer.message}` : `HTTP ${response.status}`;
    throw new Error(message);
  }
  return answer;
}

// The position --------------------------------------------------------------------------------

function positionBody() {
  return { game: position.game, position: position.start, moves: position.moves };
}

function playMove(text) {
  position.moves.push(text);
  loadPosition(true);
}

function drawPosition() {
  const answer = position.answer;
  boardBox.dataset.game = answer.game;
  const drawing = drawBoard(answer.game, answer.position, {});
  boardBox.replaceChildren(...(drawing ? [drawing] : []));
  if (drawing) {
    drawing.querySelectorAll("rect.hit").forEach((hit) => {
      const text = hit.dataset.cell ?? hit.dataset.column;
      if (text !== undefined && answer.legal_moves.includes(String(text))) {
        hit.classList.add("target");
        hit.addEventListener("click", () => playMove(String(text)));
      }
    });
  }
  turnText.textContent = answer.over
    ? `The game is over in ${answer.position || "this position"}: nothing to search.`
    : `Position ${answer.position || "(empty)"}; ${answer.to_move} to move.`;
  legalBox.replaceChildren(
    ...answer.legal_moves.map((move) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "move-button";
      button.textContent = move;
      button.setAttribute("aria-label", `play ${move}`);
      button.addEventListener("click", () => playMove(move));
      return button;
    }),
  );
  movesText.textContent = position.moves.length ? position.moves.join(" ") : "none";
  $("explore-undo").disabled = position.moves.length === 0;
  $("explore-clear").disabled = position.moves.length === 0;
}

// The position typed: null when the field is empty (the game's start).
function typedStart() {
  const text = positionInput.value.trim();
  return text ? text : null;
}

// Set the position typed (no moves played on it yet). True once it is set; false when the
// server refused it, the refusal shown (with `then`, what came of it) and the board left as it
// was.
async function setTypedPosition(then = "") {
  const start = typedStart();
  let answer;
  try {
    answer = await post("/explore/position", { game: position.game, position: start, moves: [] });
  } catch (error) {
    positionInput.setAttribute("aria-invalid", "true");
    showError(`The position typed cannot be used: ${error.message}${then}`);
    return false;
  }
  position.start = start;
  position.moves = [];
  position.answer = answer;
  positionInput.removeAttribute("aria-invalid");
  showError("");
  drawPosition();
  return true;
}

async function loadPosition(played = false) {
  try {
    position.answer = await post("/explore/position", positionBody());
    showError("");
    drawPosition();
  } catch (error) {
    if (played) position.moves.pop(); // the move just played was refused: take it back
    showError(error.message);
  }
}

// The trace's request ---------------------------------------------------------------------------

function bound(text, fallback) {
  const raw = text.trim().toLowerCase();
  if (!raw) return fallback;
  if (raw === "inf" || raw === "+inf" || raw === "∞") return "inf";
  if (raw === "-inf" || raw === "-∞") return "-inf";
  const number = Number(raw);
  return Number.isFinite(number) ? number : raw; // the server names what is wrong
}

function traceBody() {
  const body = {
    ...positionBody(),
    search: searchSelect.value,
    depth: Number($("explore-depth").value),
    scoring: $("explore-scoring").value,
    tt: $("explore-tt").checked,
    ordering: $("explore-ordering").checked,
  };
  const evaluation = $("explore-eval").value;
  if (evaluation) body.evaluation = evaluation;
  const alpha = $("explore-alpha");
  const beta = $("explore-beta");
  if (!alpha.disabled && (alpha.value.trim() || beta.value.trim())) {
    body.window = [bound(alpha.value, "-inf"), bound(beta.value, "inf")];
  }
  return body;
}

function syncOptions() {
  const search = searchSelect.value;
  const engine = search === "engine";
  $("explore-tt").disabled = !engine;
  $("explore-ordering").disabled = !engine;
  const windowed = !["minimax", "minimax_prune", "engine"].includes(search);
  $("explore-alpha").disabled = !windowed;
  $("explore-beta").disabled = !windowed;
}

// The tree ------------------------------------------------------------------------------------

function el(name, attributes = {}, text = null) {
  const node = document.createElementNS(NS, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

function principalPath() {
  const nodes = traced.nodes;
  const path = [0];
  for (const move of traced.pv) {
    const child = nodes[path[path.length - 1]].children.find((c) => nodes[c].move === move);
    if (child === undefined) break;
    path.push(child);
  }
  return path;
}

function ancestors(index) {
  const path = new Set();
  for (let i = index; i !== null; i = traced.nodes[i].parent) path.add(i);
  return path;
}

function opened() {
  const nodes = traced.nodes;
  if (nodes.length <= FULL_TREE) return new Set(nodes.map((node) => node.i));
  return ancestors(step);
}

function layout(open) {
  const nodes = traced.nodes;
  const longest = Math.max(0, ...nodes.map((node) => (node.move || "").length));
  const xStep = Math.max(58, 8 * longest + 22);
  const items = [];
  let next = 0;
  function place(index, parent) {
    const node = nodes[index];
    const item = { node, x: 0, y: TOP + node.ply * Y_STEP, parent, folded: 0 };
    items.push(item);
    const me = items.length - 1;
    const xs = [];
    if (open.has(index)) node.children.forEach((child) => xs.push(place(child, me)));
    else if (node.children.length) item.folded = sizes[index] - 1;
    if (node.pruned.length && (open.has(index) || !node.children.length)) {
      const moves = node.pruned;
      const labels = moves.length <= STUBS ? moves : [...moves.slice(0, STUBS - 1), `+${moves.length - STUBS + 1}`];
      labels.forEach((label) => {
        const stub = { stub: label, of: node, x: MARGIN_X + next * xStep, y: item.y + Y_STEP * 0.72, parent: me };
        items.push(stub);
        xs.push(stub.x);
        next += 0.8;
      });
    }
    if (xs.length) item.x = (xs[0] + xs[xs.length - 1]) / 2;
    else {
      item.x = MARGIN_X + next * xStep;
      next += 1;
    }
    return item.x;
  }
  place(0, null);
  return items;
}

function shape(node, x, y) {
  if (node.kind !== "inner") {
    return el("rect", { x: x - S + 3, y: y - S + 5, width: 2 * S - 6, height: 2 * S - 10, rx: 2 });
  }
  const points =
    node.side === "max"
      ? [[x, y - S], [x + S * 1.15, y + S * 0.75], [x - S * 1.15, y + S * 0.75]]
      : [[x, y + S], [x + S * 1.15, y - S * 0.75], [x - S * 1.15, y - S * 0.75]];
  return el("polygon", { points: points.map((p) => p.map((v) => v.toFixed(1)).join(",")).join(" ") });
}

function isDone(node) {
  return node.i + sizes[node.i] - 1 <= step;
}

function drawTree() {
  const items = layout(opened());
  const last = step === traced.nodes.length - 1;
  const pv = last ? new Set(principalPath()) : new Set();
  const path = ancestors(step);
  const withWindow = hasWindow();
  let width = 0;
  let height = 0;
  const levels = new Map();
  items.forEach((item) => {
    width = Math.max(width, item.x + MARGIN_X);
    height = Math.max(height, item.y + Y_STEP * 0.6);
    if (item.node && !item.stub && !levels.has(item.y)) levels.set(item.y, item.node.side);
  });
  svg.replaceChildren(el("title", { id: "tree-title" }, "The search tree"));
  // Fitted, the drawing is scaled down to the box's width (never up, never below a third).
  const scale = $("tree-fit").checked ? Math.max(1 / 3, Math.min(1, (treeBox.clientWidth - 2) / width)) : 1;
  svg.setAttribute("width", (width * scale).toFixed(0));
  svg.setAttribute("height", (height * scale).toFixed(0));
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  levels.forEach((side, y) => svg.append(el("text", { class: "level", x: 6, y: y + 4 }, side.toUpperCase())));
  const edges = el("g", { class: "edges" });
  const shapes = el("g", { class: "nodes" });
  items.forEach((item) => {
    if (item.parent === null) return;
    const up = items[item.parent];
    const x1 = up.x;
    // Edges leave a node below its window's text, which they would otherwise cross.
    const y1 = up.y + (withWindow && up.node.kind !== "terminal" ? S + 16 : S * 0.8);
    const x2 = item.x;
    const y2 = item.y - S * 0.8;
    if (item.stub !== undefined) {
      const shown = isDone(item.of) ? "" : " future";
      edges.append(el("path", { class: `edge pruned${shown}`, d: `M${x1},${y1} L${x2},${y2 + 8}` }));
      const dx = x2 - x1;
      const dy = y2 - y1;
      const length = Math.hypot(dx, dy) || 1;
      const nx = (-dy / length) * 7;
      const ny = (dx / length) * 7;
      const cx = x1 + dx * 0.6;
      const cy = y1 + dy * 0.6;
      edges.append(el("line", { class: `cut${shown}`, x1: cx - nx, y1: cy - ny, x2: cx + nx, y2: cy + ny }));
      const g = el("g", { class: `stub-node${shown}`, "data-of": item.of.i });
      g.append(el("title", {}, `never searched: ${item.stub}`));
      g.append(el("rect", { class: "stub", x: item.x - 14, y: item.y - 9, width: 28, height: 18, rx: 3 }));
      g.append(el("text", { class: "move pruned", x: item.x, y: item.y + 4 }, item.stub));
      shapes.append(g);
      return;
    }
    const node = item.node;
    const future = node.i > step ? " future" : "";
    const classes = ["edge"];
    if (pv.has(node.i) && pv.has(up.node.i)) classes.push("pv");
    if (path.has(node.i)) classes.push("active");
    edges.append(el("path", { class: classes.join(" ") + future, d: `M${x1},${y1} L${x2},${y2}` }));
    edges.append(
      el("text", { class: `move${future}`, x: x1 + (x2 - x1) * 0.7, y: y1 + (y2 - y1) * 0.7 + 4 }, node.move || ""),
    );
  });
  items.forEach((item) => {
    if (item.stub !== undefined) return;
    const node = item.node;
    const state = node.i > step ? "future" : node.i === step ? "current" : isDone(node) ? "done" : "open";
    const g = el("g", { class: `tree-node ${state}`, "data-i": node.i });
    const classes = ["node", node.kind, node.side];
    if (pv.has(node.i)) classes.push("pv");
    if (item.folded) classes.push("folded");
    if (node.cutoff && isDone(node)) classes.push("cutoff");
    const drawn = shape(node, item.x, item.y);
    drawn.setAttribute("class", classes.join(" "));
    g.append(drawn);
    const dy = node.kind === "inner" ? (node.side === "max" ? 3 : -3) : 0;
    const value = isDone(node) || node.i === step ? (isDone(node) ? nodeValue(node) : "?") : "";
    g.append(el("text", { class: "value", x: item.x, y: item.y + dy }, value));
    g.append(el("text", { class: "order", x: item.x - S - 2, y: item.y - S + 4 }, `#${node.i}`));
    let below = item.y + S + 11;
    if (withWindow && node.kind !== "terminal") {
      g.append(el("text", { class: "window", x: item.x, y: below }, windowText(node.alpha, node.beta, "⟨", "⟩").replace(", ", ",")));
      below += 12;
    }
    if (node.kind === "table") {
      g.append(el("text", { class: "window", x: item.x, y: below }, "table"));
      below += 12;
    }
    if (item.folded) g.append(el("text", { class: "fold", x: item.x, y: below }, `+${item.folded.toLocaleString("en")}`));
    shapes.append(g);
  });
  svg.append(edges, shapes);
  const current = items.find((item) => item.node && item.stub === undefined && item.node.i === step);
  if (current) {
    treeBox.scrollLeft = Math.max(0, current.x * scale - treeBox.clientWidth / 2);
    treeBox.scrollTop = Math.max(0, current.y * scale - treeBox.clientHeight / 2);
  }
}

// The step's text -------------------------------------------------------------------------------

function describeStep() {
  const node = traced.nodes[step];
  const total = traced.nodes.length;
  $("node-visit").textContent = `#${node.i} (node ${node.i + 1} of ${total.toLocaleString("en")}), ply ${node.ply}`;
  $("node-move").textContent = node.move === null ? "(the root)" : node.move;
  $("node-side").textContent = node.side === "max" ? "MAX" : "MIN";
  const window = hasWindow();
  $("node-window").textContent = window ? windowText(node.alpha, node.beta) : "none (minimax has no window)";
  $("node-value").textContent = nodeValue(node);
  $("node-window-out").textContent = window ? windowText(node.alpha_out, node.beta_out, "[", "]") : "none";
  $("node-kind").textContent = KINDS[node.kind] + (node.tt_hit && node.kind !== "table" ? " (table hit)" : "");
  $("node-cut").textContent = node.cutoff
    ? `yes: never searched ${node.pruned.join(" ") || "-"}`
    : "no";
  $("node-position").textContent = node.position || "(empty)";
  const parts = [`Node ${node.i + 1} of ${total}`];
  parts.push(node.move === null ? "the root" : `move ${node.move}`);
  if (window) parts.push(`entered with ${windowText(node.alpha, node.beta)}`);
  parts.push(`returns ${nodeValue(node)}`);
  if (node.cutoff) parts.push("cut-off");
  $("step-status").textContent = parts.join(", ") + ".";
  const visited = new Array(traced.counts_by_depth.length).fill(0);
  for (let i = 0; i <= step; i += 1) visited[traced.nodes[i].ply] += 1;
  const table = $("trace-counts");
  const rows = traced.counts_by_depth.map((count, ply) => {
    const row = document.createElement("tr");
    [String(ply), String(visited[ply]), String(count)].forEach((text, index) => {
      const cell = document.createElement(index === 0 ? "th" : "td");
      if (index === 0) cell.scope = "row";
      cell.textContent = text;
      row.append(cell);
    });
    return row;
  });
  table.tBodies[0].replaceChildren(...rows);
  $("step-first").disabled = step === 0;
  $("step-back").disabled = step === 0;
  $("step-next").disabled = step === total - 1;
  $("step-last").disabled = step === total - 1;
}

function show(index) {
  step = Math.max(0, Math.min(traced.nodes.length - 1, index));
  section.dataset.step = String(step);
  describeStep();
  drawTree();
}

function pause() {
  if (timer !== null) clearInterval(timer);
  timer = null;
  runButton.textContent = "Run";
  runButton.setAttribute("aria-pressed", "false");
  section.dataset.running = "false";
}

function run() {
  if (timer !== null) {
    pause();
    return;
  }
  if (step === traced.nodes.length - 1) show(0);
  runButton.textContent = "Pause";
  runButton.setAttribute("aria-pressed", "true");
  section.dataset.running = "true";
  timer = setInterval(() => {
    if (step >= traced.nodes.length - 1) pause();
    else show(step + 1);
  }, Number($("step-speed").value));
}

function summarise() {
  const stats = traced.stats;
  const depth = traced.depth === null ? "to the end" : `depth ${traced.depth}`;
  const view =
    traced.perspective === "root"
      ? "values for the root player (MAX)"
      : "values for the side to move at each node (negamax)";
  $("trace-summary").textContent =
    `${traced.search} on ${traced.game} ${traced.position || "(start)"}, ${depth}: value ` +
    `${formatValue(traced.value, traced.scoring)}, best move ${traced.best_move}, ` +
    `principal variation ${traced.pv.join(" ") || "-"}; ${stats.nodes.toLocaleString("en")} nodes, ` +
    `${stats.cutoffs.toLocaleString("en")} cut-offs` +
    (traced.search === "engine" ? `, ${stats.tt_hits.toLocaleString("en")} table hits` : "") +
    `; ${view}.`;
}

async function traceSearch(event) {
  event.preventDefault();
  pause();
  const button = $("explore-run");
  button.disabled = true;
  try {
    // What is traced is what is typed: a position typed but not set yet is set first, and one
    // the server refuses is traced from no other board.
    const refused = "; nothing was traced: correct the position, or empty the field for the game's start.";
    if (typedStart() !== position.start && !(await setTypedPosition(refused))) return;
    traced = await post("/explore/trace", traceBody());
  } catch (error) {
    showError(error.message);
    return;
  } finally {
    button.disabled = false;
  }
  showError("");
  sizes = new Array(traced.nodes.length).fill(1);
  for (let i = traced.nodes.length - 1; i > 0; i -= 1) sizes[traced.nodes[i].parent] += sizes[i];
  section.hidden = false;
  summarise();
  show(0);
  section.scrollIntoView({ block: "start" });
  $("step-next").focus({ preventScroll: true });
}

// Wiring ----------------------------------------------------------------------------------------

function isTyping(target) {
  // Keys typed into a field or choosing in a list are theirs; a checkbox or a button leaves
  // the arrows to the stepping.
  if (target instanceof HTMLInputElement) return !["checkbox", "radio", "button"].includes(target.type);
  return target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement;
}

document.addEventListener("keydown", (event) => {
  if (!traced || section.hidden || event.altKey || event.ctrlKey || event.metaKey || isTyping(event.target)) return;
  const key = event.key;
  const onButton = event.target instanceof HTMLButtonElement;
  if (key === "ArrowRight" || key === "n" || key === "N") show(step + 1);
  else if (key === "ArrowLeft" || key === "b" || key === "B") show(step - 1);
  else if (key === "Home") show(0);
  else if (key === "End") show(traced.nodes.length - 1);
  else if (key === "r" || key === "R" || (key === " " && !onButton)) run();
  else return;
  if (key !== "r" && key !== "R" && key !== " ") pause();
  event.preventDefault();
});

$("step-next").addEventListener("click", () => { pause(); show(step + 1); });
$("step-back").addEventListener("click", () => { pause(); show(step - 1); });
$("step-first").addEventListener("click", () => { pause(); show(0); });
$("step-last").addEventListener("click", () => { pause(); show(traced.nodes.length - 1); });
runButton.addEventListener("click", run);
$("step-speed").addEventListener("change", () => {
  if (timer !== null) {
    pause();
    run();
  }
});
form.addEventListener("submit", traceSearch);
$("tree-fit").addEventListener("change", () => {
  if (traced) drawTree();
});
searchSelect.addEventListener("change", syncOptions);
function syncEvaluations() {
  // Only the chosen game's evaluations are offered.
  const evaluations = $("explore-eval");
  for (const option of evaluations.options) {
    const other = option.dataset.game !== undefined && option.dataset.game !== gameSelect.value;
    option.hidden = other;
    option.disabled = other;
  }
  if (evaluations.selectedOptions[0] && evaluations.selectedOptions[0].disabled) evaluations.value = "";
}

gameSelect.addEventListener("change", () => {
  syncEvaluations();
  position.game = gameSelect.value;
  position.start = null;
  position.moves = [];
  positionInput.value = "";
  loadPosition();
});
$("explore-load").addEventListener("click", () => {
  setTypedPosition();
});
positionInput.addEventListener("keydown", (event) => {
  if (event.key === "Enter") {
    event.preventDefault();
    $("explore-load").click();
  }
});
$("explore-undo").addEventListener("click", () => {
  position.moves.pop();
  loadPosition();
});
$("explore-clear").addEventListener("click", () => {
  position.moves = [];
  loadPosition();
});

syncOptions();
syncEvaluations();
loadPosition();
