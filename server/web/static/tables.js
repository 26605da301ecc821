// Tables wider than their box (a phone's width) scroll in it. Each box that scrolls says so: a
// hint at its start (kept in view while the table scrolls, arena.css), a named region that Tab
// reaches so that the arrow keys scroll it; a box whose table fits says nothing. The shadows on
// the sides with hidden columns are arena.css's. Boxes a page adds later (a tournament's page
// swaps in new tables) are watched too.

const HINT = "Wider than the screen: scroll sideways to see every column.";

function nameOf(box) {
  // The table's caption, else the heading of its section: what a screen reader announces.
  const caption = box.querySelector("caption");
  if (caption && caption.textContent.trim()) return caption.textContent.trim();
  const section = box.closest("section");
  const heading = section && section.querySelector("h2, h3");
  return heading ? heading.textContent.trim().replace(/\s+/g, " ") : "Table";
}

function mark(box) {
  const hint = box.querySelector(":scope > .scroll-hint");
  const table = box.querySelector("table");
  // The table's own width, not the box's scroll width, which a hint itself never widens.
  const overflows = table !== null && table.offsetWidth > box.clientWidth + 1;
  if (overflows) {
    if (!hint) {
      const note = document.createElement("p");
      note.className = "scroll-hint";
      note.textContent = HINT;
      box.prepend(note);
    }
    const label = `${nameOf(box)} (scrolls sideways)`;
    if (box.getAttribute("aria-label") !== label) box.setAttribute("aria-label", label);
    box.setAttribute("role", "region");
    box.tabIndex = 0;
  } else if (hint || box.hasAttribute("tabindex")) {
    if (hint) hint.remove();
    box.removeAttribute("aria-label");
    box.removeAttribute("role");
    box.removeAttribute("tabindex");
  }
}

const watched = new WeakSet();
// A box and its table are both observed: a table widens without its box changing size (a
// longer name drawn into it), and a box narrows without its table changing (a phone turned).
const resizes = new ResizeObserver((entries) => {
  for (const entry of entries) {
    const box = entry.target.closest(".scroll");
    if (box) mark(box);
  }
});

function watchAll() {
  for (const box of document.querySelectorAll(".scroll")) {
    if (watched.has(box)) continue;
    watched.add(box);
    resizes.observe(box);
    const table = box.querySelector("table");
    if (table) resizes.observe(table);
    mark(box);
  }
}

new MutationObserver(watchAll).observe(document.body, { childList: true, subtree: true });
watchAll();
