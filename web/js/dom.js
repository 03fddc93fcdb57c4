// Tiny DOM builder: every string becomes a text node, never markup.

/**
 * Create an element. Props: `class`, `text`, `dataset`, `on<event>` handlers, or attributes.
 * Children may be nodes or strings (appended as text); null and false are skipped.
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value == null || value === false) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  node.append(...children.filter((child) => child != null && child !== false));
  return node;
}

/**
 * Pretty-print JSON-able data (on one line if it is short); strings that hold JSON are
 * parsed first, other strings are returned as they are.
 */
export function prettyJson(value) {
  let data = value;
  if (typeof value === 'string') {
    try {
      data = JSON.parse(value);
    } catch {
      return value;
    }
  }
  const line = JSON.stringify(data, null, 1).replace(/\n\s*/g, ' ');
  return line.length <= 96 ? line : JSON.stringify(data, null, 2);
}
