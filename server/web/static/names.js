// Names as the pages draw them. A bot's spec (`mcts:simulations=500,seed=3`) is one word to a
// browser, which breaks it anywhere at a phone's width: as the server's `breakable` filter
// (server/web/pages.py), a line-break opportunity (<wbr>) follows each ':' and ','. Text
// nodes only: a name is never markup.

/** Return the nodes of `text` with a <wbr> after each ':' and ',' that is not last. */
export function breakable(text) {
  const nodes = [];
  let start = 0;
  for (let i = 0; i < text.length - 1; i += 1) {
    if (text[i] === ":" || text[i] === ",") {
      nodes.push(document.createTextNode(text.slice(start, i + 1)), document.createElement("wbr"));
      start = i + 1;
    }
  }
  nodes.push(document.createTextNode(text.slice(start)));
  return nodes;
}

/** Set `element`'s content to `text`, breakable after its ':' and ','. */
export function setBreakable(element, text) {
  element.replaceChildren(...breakable(text));
}
