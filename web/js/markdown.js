// Markdown to DOM nodes for untrusted model output. Nothing is ever parsed as HTML: text
// goes into text nodes, so `<img onerror=...>` or `<script>` in an answer shows as text.
// Supported: paragraphs, line breaks, headings, lists, quotes, code, tables, rules,
// emphasis, inline code, and links to http(s)/mailto only.

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
const HEADING = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const ITEM = /^( {0,3})([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*))?$/;
const TABLE_RULE = /^ *\|? *:?-+:? *(\| *:?-+:? *)*\|? *$/;
const ESCAPABLE = /[!-/:-@[-`{-~]/;
const WORD = /[\p{L}\p{N}]/u;
const SAFE_URL = /^(https?:\/\/|mailto:)/i;

/** Render markdown `source` into a DocumentFragment of safe elements. */
export function renderMarkdown(source) {
  const fragment = document.createDocumentFragment();
  blocks(source.replace(/\r\n?/g, '\n').split('\n'), fragment);
  return fragment;
}

function blocks(lines, parent) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i += 1;
    } else if (FENCE.test(line)) {
      i = fence(lines, i, parent);
    } else if (HEADING.test(line)) {
      const [, marks, text] = HEADING.exec(line);
      parent.append(inline(text, document.createElement(`h${marks.length}`)));
      i += 1;
    } else if (RULE.test(line)) {
      parent.append(document.createElement('hr'));
      i += 1;
    } else if (QUOTE.test(line)) {
      const inner = [];
      while (i < lines.length && QUOTE.test(lines[i])) inner.push(QUOTE.exec(lines[i++])[1]);
      const quote = document.createElement('blockquote');
      blocks(inner, quote);
      parent.append(quote);
    } else if (ITEM.test(line)) {
      i = list(lines, i, parent);
    } else if (line.includes('|') && TABLE_RULE.test(lines[i + 1] || '')) {
      i = table(lines, i, parent);
    } else {
      i = paragraph(lines, i, parent);
    }
  }
}

function startsBlock(line) {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) ||
    ITEM.test(line);
}

function paragraph(lines, i, parent) {
  const text = [lines[i++]];
  while (i < lines.length && lines[i].trim() && !startsBlock(lines[i])) text.push(lines[i++]);
  parent.append(inline(text.map((l) => l.trim()).join('\n'), document.createElement('p')));
  return i;
}

function fence(lines, i, parent) {
  const [, marker, lang] = FENCE.exec(lines[i++]);
  const body = [];
  while (i < lines.length && !lines[i].trim().startsWith(marker)) body.push(lines[i++]);
  const code = document.createElement('code');
  code.textContent = body.join('\n');
  if (lang) code.dataset.lang = lang;
  const pre = document.createElement('pre');
  pre.append(code);
  parent.append(pre);
  return i + 1; // past the closing fence (or the end)
}

function list(lines, i, parent) {
  const [, indent, marker] = ITEM.exec(lines[i]);
  const ordered = /\d/.test(marker);
  const node = document.createElement(ordered ? 'ol' : 'ul');
  if (ordered && parseInt(marker, 10) !== 1) node.start = parseInt(marker, 10);
  const items = [];
  let loose = false;
  while (i < lines.length) {
    const m = ITEM.exec(lines[i]);
    if (!m || m[1].length > indent.length + 1 || /\d/.test(m[2]) !== ordered) break;
    const width = m[1].length + m[2].length + Math.min((m[3] || ' ').length, 4);
    const body = [m[4] || ''];
    i += 1;
    while (i < lines.length) {
      const next = lines[i];
      const lead = next.length - next.trimStart().length;
      if (!next.trim()) {
        const after = lines.slice(i).find((l) => l.trim());
        const afterLead = after ? after.length - after.trimStart().length : 0;
        if (!after || (afterLead < width && !ITEM.test(after))) break;
        if (afterLead < width) loose = true;
        body.push('');
      } else if (lead >= width) {
        body.push(next.slice(width));
      } else if (ITEM.test(next) || startsBlock(next) || !body[body.length - 1].trim()) {
        break;
      } else {
        body.push(next.trim()); // a lazy continuation of the item's paragraph
      }
      i += 1;
    }
    while (body.length && !body[body.length - 1].trim()) body.pop();
    items.push(body);
    if (i < lines.length && !lines[i].trim()) break;
  }
  for (const body of items) {
    const li = document.createElement('li');
    blocks(body, li);
    if (!loose) li.querySelectorAll(':scope > p').forEach((p) => p.replaceWith(...p.childNodes));
    node.append(li);
  }
  parent.append(node);
  return i;
}

function table(lines, i, parent) {
  const aligns = cells(lines[i + 1]).map((c) =>
    c.endsWith(':') ? (c.startsWith(':') ? 'center' : 'right') : c.startsWith(':') ? 'left' : '');
  const node = document.createElement('table');
  const row = (text, tag) => {
    const tr = document.createElement('tr');
    cells(text).forEach((cell, k) => {
      const td = inline(cell, document.createElement(tag));
      if (aligns[k]) td.className = `align-${aligns[k]}`;
      tr.append(td);
    });
    return tr;
  };
  const head = document.createElement('thead');
  head.append(row(lines[i], 'th'));
  const body = document.createElement('tbody');
  i += 2;
  while (i < lines.length && lines[i].includes('|') && lines[i].trim()) body.append(row(lines[i++], 'td'));
  node.append(head, body);
  const wrap = document.createElement('div');
  wrap.className = 'table-wrap';
  wrap.append(node);
  parent.append(wrap);
  return i;
}

function cells(line) {
  const text = line.trim().replace(/^\|/, '').replace(/(?<!\\)\|$/, '');
  return text.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

/** Append `text` with inline markdown to `parent` as safe nodes; return `parent`. */
export function inline(text, parent) {
  let buffer = '';
  const flush = () => {
    if (buffer) parent.append(buffer);
    buffer = '';
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    let m;
    if (c === '\\' && ESCAPABLE.test(text[i + 1] || '')) {
      buffer += text[i + 1];
      i += 2;
    } else if (c === '\n') {
      flush();
      parent.append(document.createElement('br'));
      i += 1;
    } else if (c === '`' && (m = codeSpan(text, i))) {
      flush();
      const code = document.createElement('code');
      code.textContent = m.inner;
      parent.append(code);
      i = m.end;
    } else if ('*_~'.includes(c) && (m = emphasis(text, i))) {
      flush();
      parent.append(inline(m.inner, document.createElement(m.tag)));
      i = m.end;
    } else if ((c === '[' || (c === '!' && text[i + 1] === '[')) && (m = link(text, i))) {
      flush();
      parent.append(m.node);
      i = m.end;
    } else if (c === '<' && (m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(text.slice(i)))) {
      flush();
      parent.append(anchor(m[1], m[1]));
      i += m[0].length;
    } else if (c === 'h' && !WORD.test(text[i - 1] || '') &&
        (m = /^https?:\/\/[^\s<>]*[^\s<>.,;:!?'")\]]/.exec(text.slice(i)))) {
      flush();
      parent.append(anchor(m[0], m[0]));
      i += m[0].length;
    } else {
      buffer += c;
      i += 1;
    }
  }
  flush();
  return parent;
}

function codeSpan(text, i) {
  let n = 1;
  while (text[i + n] === '`') n += 1;
  const ticks = '`'.repeat(n);
  let j = text.indexOf(ticks, i + n);
  while (j !== -1 && text[j + n] === '`') j = text.indexOf(ticks, j + n + 1);
  if (j === -1) return null;
  let inner = text.slice(i + n, j).replace(/\n/g, ' ');
  if (inner.length > 2 && inner.startsWith(' ') && inner.endsWith(' ')) inner = inner.slice(1, -1);
  return { inner, end: j + n };
}

function emphasis(text, i) {
  const c = text[i];
  let run = 1;
  while (text[i + run] === c) run += 1;
  if (c === '~' && run !== 2) return null;
  const size = run >= 2 ? 2 : 1;
  const delim = c.repeat(size);
  const after = text[i + size];
  if (!after || /\s/.test(after)) return null;
  if (c === '_' && WORD.test(text[i - 1] || '')) return null; // snake_case is not emphasis
  for (let j = text.indexOf(delim, i + size + 1); j !== -1; j = text.indexOf(delim, j + 1)) {
    const before = text[j - 1];
    const next = text[j + size] || '';
    if (/\s/.test(before) || (size === 1 && (next === c || before === c))) continue;
    if (c === '_' && WORD.test(next)) continue;
    const tag = c === '~' ? 'del' : size === 2 ? 'strong' : 'em';
    return { tag, inner: text.slice(i + size, j), end: j + size };
  }
  return null;
}

function link(text, i) {
  const image = text[i] === '!';
  const open = image ? i + 1 : i;
  let depth = 0;
  let close = -1;
  for (let j = open; j < text.length; j += 1) {
    if (text[j] === '\\') j += 1;
    else if (text[j] === '[') depth += 1;
    else if (text[j] === ']' && --depth === 0) {
      close = j;
      break;
    }
  }
  if (close === -1 || text[close + 1] !== '(') return null;
  const target = /^\(\s*<?([^\s<>()]*(?:\([^\s<>()]*\)[^\s<>()]*)*)>?(?:\s+("[^"]*"|'[^']*'))?\s*\)/
    .exec(text.slice(close + 1));
  if (!target) return null;
  const label = text.slice(open + 1, close);
  // Images are never loaded (model output must not make the browser fetch anything).
  const node = SAFE_URL.test(target[1])
    ? inline(label, anchor(target[1]))
    : inline(label, document.createElement('span'));
  if (image) node.classList.add('image-link');
  return { node, end: close + 1 + target[0].length };
}

function anchor(href, text) {
  const a = document.createElement('a');
  a.href = href;
  a.rel = 'noopener noreferrer nofollow';
  a.target = '_blank';
  if (text) a.textContent = text;
  return a;
}
