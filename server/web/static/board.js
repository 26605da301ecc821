// Boards drawn as SVG from a position's text, one function per game. The text formats are the
// games' own (games/*.py format_position): checkers a PDN FEN (`B:W21,22,K5:B1,2`), Connect
// Four the columns played from the empty board (`4455`), tic-tac-toe nine cells `X`, `O`, `.`
// (row by row), Nim the heap sizes (`3,4,5`, `/2` when the second player is to move).

const SVG = "http://www.w3.org/2000/svg";

function element(name, attributes = {}, text = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

function svgRoot(width, height, label) {
  const svg = element("svg", {
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": label,
    class: "board-svg",
  });
  svg.append(element("title", {}, label));
  return svg;
}

function hit(x, y, width, height, data) {
  // A transparent area over a square, column, cell or heap: the match page's play mode
  // (play.js) highlights these and takes clicks on them; they show nothing otherwise.
  const attributes = { x, y, width, height, class: "hit", fill: "transparent" };
  for (const [key, value] of Object.entries(data)) attributes[`data-${key}`] = value;
  return element("rect", attributes);
}

// Checkers ---------------------------------------------------------------------------------

function checkersSquares(field) {
  // A FEN field lists squares, kings prefixed K; ranges (`1-12`) are read too.
  const pieces = [];
  for (const item of field.split(",")) {
    const text = item.trim();
    if (!text) continue;
    const king = text.startsWith("K");
    const body = king ? text.slice(1) : text;
    const [from, to] = body.split("-").map(Number);
    for (let square = from; square <= (to || from); square += 1) pieces.push({ square, king });
  }
  return pieces;
}

export function parseCheckers(position) {
  const [side, ...fields] = position.split(":");
  const pieces = new Map();
  for (const field of fields) {
    const colour = field[0] === "W" ? "white" : "black";
    for (const piece of checkersSquares(field.slice(1))) {
      pieces.set(piece.square, { colour, king: piece.king });
    }
  }
  return { toMove: side === "W" ? "white" : "black", pieces };
}

function squareCell(square) {
  // Square 1 is at the top left seen from White, on the second column (games/checkers/board.py).
  const row = Math.floor((square - 1) / 4);
  const column = 2 * ((square - 1) % 4) + (row % 2 === 0 ? 1 : 0);
  return { row, column };
}

function drawCheckers(position, { lastMove, numbers, flipped }) {
  const size = 50;
  const { pieces } = parseCheckers(position);
  const marked = new Set((lastMove || "").split(/[-x]/).map(Number).filter(Boolean));
  const svg = svgRoot(8 * size, 8 * size, `Checkers board: ${position}`);
  for (let row = 0; row < 8; row += 1) {
    for (let column = 0; column < 8; column += 1) {
      const dark = (row + column) % 2 === 1;
      svg.append(
        element("rect", {
          x: column * size,
          y: row * size,
          width: size,
          height: size,
          class: dark ? "sq-dark" : "sq-light",
        }),
      );
    }
  }
  for (let square = 1; square <= 32; square += 1) {
    // Flipped: seen from Black (square 1 at the bottom right), for a player of Black.
    const cell = squareCell(square);
    const row = flipped ? 7 - cell.row : cell.row;
    const column = flipped ? 7 - cell.column : cell.column;
    const x = column * size;
    const y = row * size;
    if (marked.has(square)) {
      svg.append(
        element("rect", {
          x: x + 2,
          y: y + 2,
          width: size - 4,
          height: size - 4,
          class: "last-move",
        }),
      );
    }
    const piece = pieces.get(square);
    if (piece) {
      svg.append(
        element("circle", {
          cx: x + size / 2,
          cy: y + size / 2,
          r: size * 0.38,
          class: `piece piece-${piece.colour}`,
        }),
      );
      if (piece.king) {
        svg.append(
          element(
            "text",
            { x: x + size / 2, y: y + size / 2, class: `king king-${piece.colour}` },
            "K",
          ),
        );
      }
    }
    if (numbers) {
      svg.append(element("text", { x: x + 3, y: y + 12, class: "square-number" }, square));
    }
    svg.append(hit(x, y, size, size, { square }));
  }
  return svg;
}

// Connect Four -----------------------------------------------------------------------------

function drawConnectFour(position) {
  const columns = 7;
  const rows = 6;
  const size = 50;
  const heights = new Array(columns).fill(0);
  const discs = [];
  [...position].forEach((char, index) => {
    const column = Number(char) - 1;
    if (!(column >= 0 && column < columns) || heights[column] >= rows) return;
    discs.push({ column, row: heights[column], seat: index % 2 });
    heights[column] += 1;
  });
  const svg = svgRoot(columns * size, rows * size, `Connect Four board: ${position || "empty"}`);
  svg.append(element("rect", { x: 0, y: 0, width: columns * size, height: rows * size, class: "c4-frame" }));
  const at = new Map(discs.map((disc, index) => [`${disc.column},${disc.row}`, { ...disc, index }]));
  for (let column = 0; column < columns; column += 1) {
    for (let row = 0; row < rows; row += 1) {
      const disc = at.get(`${column},${row}`);
      const last = disc && disc.index === discs.length - 1;
      // A hole knows its place: play mode rings the one a disc dropped in its column lands in.
      const place = disc ? {} : { "data-column": column + 1, "data-row": row };
      svg.append(
        element("circle", {
          cx: column * size + size / 2,
          cy: (rows - 1 - row) * size + size / 2,
          r: size * 0.4,
          class: disc ? `disc seat-${disc.seat}${last ? " last-disc" : ""}` : "hole",
          ...place,
        }),
      );
    }
    svg.append(hit(column * size, 0, size, rows * size, { column: column + 1 }));
  }
  return svg;
}

// Tic-tac-toe ------------------------------------------------------------------------------

function drawTicTacToe(position, { previous }) {
  const size = 60;
  const svg = svgRoot(3 * size, 3 * size, `Tic-tac-toe board: ${position}`);
  for (let index = 0; index < 9; index += 1) {
    const x = (index % 3) * size;
    const y = Math.floor(index / 3) * size;
    const mark = position[index] || ".";
    const changed = previous && previous[index] !== mark;
    svg.append(
      element("rect", {
        x,
        y,
        width: size,
        height: size,
        class: changed ? "ttt-cell last-move" : "ttt-cell",
      }),
    );
    if (mark === "X" || mark === "O") {
      svg.append(
        element(
          "text",
          { x: x + size / 2, y: y + size / 2, class: `ttt-mark mark-${mark.toLowerCase()}` },
          mark,
        ),
      );
    }
    svg.append(hit(x, y, size, size, { cell: index }));
  }
  return svg;
}

// Nim --------------------------------------------------------------------------------------

function drawNim(position, { lastMove }) {
  const heaps = position.split("/")[0].split(",").map(Number);
  const [heapText, countText] = (lastMove || "").split(":");
  const lastHeap = Number(heapText) - 1;
  const taken = Number(countText) || 0;
  const shown = 20;
  const row = 34;
  const width = 80 + shown * 14 + 20;
  const svg = svgRoot(width, heaps.length * row + 8, `Nim heaps: ${heaps.join(", ")}`);
  heaps.forEach((size, index) => {
    const y = 8 + index * row;
    const last = index === lastHeap;
    svg.append(
      element("text", { x: 4, y: y + 20, class: `heap-label${last ? " last-heap" : ""}` }, `${index + 1}: ${size}`),
    );
    const sticks = size <= shown ? size : 0;
    for (let stick = 0; stick < sticks; stick += 1) {
      svg.append(element("rect", { x: 80 + stick * 14, y, width: 6, height: 26, rx: 2, class: "stick" }));
    }
    if (last) {
      const removed = Math.min(taken, shown - sticks);
      for (let stick = 0; stick < removed; stick += 1) {
        svg.append(
          element("rect", { x: 80 + (sticks + stick) * 14, y, width: 6, height: 26, rx: 2, class: "stick taken" }),
        );
      }
    }
    svg.append(hit(0, y - 4, width, row, { heap: index + 1 }));
  });
  return svg;
}

const DRAWERS = {
  checkers: drawCheckers,
  connect4: drawConnectFour,
  tictactoe: drawTicTacToe,
  nim: drawNim,
};

/** Return the SVG of `position` in `game`, or null for a game with no drawing; its name says
 * the last move (`options.lastMove`) too, which the drawing marks. */
export function drawBoard(game, position, options = {}) {
  const draw = DRAWERS[game];
  if (!draw) return null;
  const svg = draw(position, options);
  if (options.lastMove) {
    const label = `${svg.getAttribute("aria-label")}, last move ${options.lastMove}`;
    svg.setAttribute("aria-label", label);
    svg.querySelector("title").textContent = label;
  }
  return svg;
}
