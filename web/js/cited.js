// Cited figures: a text block that carries `citations` (it rests on tool results) is shown as
// a link-like span inside the markdown of the text around it. The text of a message comes as
// several blocks meant to be read as one, so a run of them is rendered as one markdown source
// with marker characters around each cited block; after DOMPurify the markers become spans.
// The markers are punctuation (markdown treats them like a bracket, so `**$339.14**` next to one
// still turns bold), and the model's own copies of them are dropped before ours go in: model
// text cannot make a cited span, and it never becomes markup (the spans are made from text).

import { el } from './dom.js';
import { renderMarkdown } from './markdown.js';

const START = '\u2E0E'; // EDITORIAL CORONIS
const END = '\u2E0F'; // PARAGRAPHOS
const DIGIT0 = 0x2e30; // RING POINT .. TOP HALF SECTION SIGN: the cited block's number
const MARKERS = /[\u2E0E\u2E0F\u2E30-\u2E39]/g;
const MARK = /\u2E0E([\u2E30-\u2E39]+)|\u2E0F/g;
// Block syntax at the start of a cited block (a list item, heading, quote, table cell) stays
// in front of the marker, so the block keeps its meaning.
const LEAD = /^(?:\s*(?:[-*+]\s+|\d{1,9}[.)]\s+|#{1,6}\s+|>\s?|\|\s*))*\s*/;

const cited = new WeakMap(); // cited span -> { citations, text }

/** The citations and cited text behind a `.cite` span (null for anything else). */
export function citedBy(node) {
  return cited.get(node) || null;
}

/** Make `node` (a chart's bar) open the records of `citations` like a cited figure. */
export function citeNode(node, citations, text) {
  cited.set(node, { citations, text });
}

/**
 * Render a run of text blocks (`{ source, citations }` each, in order) as one markdown
 * fragment, each cited block's text wrapped in `.cite` spans.
 */
export function renderRun(blocks) {
  const cites = blocks.filter((b) => b.citations.length);
  if (!cites.length) return renderMarkdown(blocks.map((b) => b.source).join(''));
  let n = 0;
  const source = blocks
    .map((b) => {
      const text = b.source.replace(MARKERS, '');
      return b.citations.length ? marked(text, n++) : text;
    })
    .join('');
  const fragment = renderMarkdown(source);
  wrapMarked(fragment, cites);
  return fragment;
}

function marked(text, index) {
  const lead = LEAD.exec(text)[0];
  const body = text.slice(lead.length).trimEnd();
  const trail = text.slice(lead.length + body.length);
  const digits = [...String(index)].map((d) => String.fromCharCode(DIGIT0 + Number(d))).join('');
  return `${lead}${START}${digits}${body}${END}${trail}`;
}

function number(digits) {
  return Number([...digits].map((c) => c.charCodeAt(0) - DIGIT0).join(''));
}

/** Turn the markers in `fragment`'s text into spans; a cited text over several nodes gets one per node. */
function wrapMarked(fragment, cites) {
  const texts = [];
  const walker = document.createTreeWalker(fragment, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) texts.push(walker.currentNode);
  const spans = cites.map(() => []);
  let open = null; // the number of the cited block the walk is inside
  for (const node of texts) {
    const parts = [];
    let at = 0;
    MARK.lastIndex = 0;
    for (let m = MARK.exec(node.data); m; m = MARK.exec(node.data)) {
      parts.push([node.data.slice(at, m.index), open]);
      open = m[1] ? number(m[1]) : null;
      at = m.index + m[0].length;
    }
    if (!parts.length && open === null) continue;
    parts.push([node.data.slice(at), open]);
    const nodes = parts
      .filter(([text]) => text)
      .map(([text, index]) => {
        if (index === null || !cites[index]) return document.createTextNode(text);
        const span = el('span', { class: 'cite' }, text);
        spans[index].push(span);
        return span;
      });
    node.replaceWith(...nodes);
  }
  for (const node of fragment.querySelectorAll('*')) {
    for (const attr of node.attributes) {
      const clean = attr.value.replace(MARKERS, '');
      if (clean !== attr.value) attr.value = clean;
    }
  }
  spans.forEach((parts, index) => dress(parts, cites[index], index + 1));
}

/** Make a cited block's spans one control: the first takes the focus, the last the marker. */
function dress(parts, block, mark) {
  if (!parts.length) return;
  const text = parts.map((s) => s.textContent).join('').trim();
  const titles = [...new Set(block.citations.map((c) => c.title || c.source).filter(Boolean))];
  const names = `Sources: ${titles.join('; ') || 'the tool results'}`;
  for (const span of parts) {
    span.title = names;
    cited.set(span, { citations: block.citations, text });
  }
  parts[0].tabIndex = 0;
  parts[0].setAttribute('role', 'button');
  parts[0].setAttribute('aria-controls', 'sources');
  parts[0].setAttribute('aria-label', `${text} (${names}). Show the cited records.`);
  parts.at(-1).classList.add('cite-end');
  parts.at(-1).dataset.mark = String(mark);
}
