// A tool's result as people read it: its figures as labelled values and its lists as tables,
// with the raw JSON one click away.

import { el, prettyJson } from './dom.js';
import { formatAmount, isAmount, isNegative } from './money.js';

const MAX_ROWS = 100;
const MAX_COLUMNS = 10;
const NUMBER = /^[-+−]?[\d.,\s]+(?:\s?[A-Z]{3}|%)?$/;
const DATE = /^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?$/;

/** A collapsed tool result (or error) for a `tool_result` event; a declined call's decision. */
export function resultView(data) {
  if (data.declined) return declinedView(data.declined);
  const raw = resultText(data.content);
  const parsed = parse(data.content);
  const view = data.is_error || parsed === undefined ? null : readable(parsed);
  const pre = el('pre', { class: 'raw', text: raw, hidden: Boolean(view) });
  const toggle = view
    ? el('button', {
        type: 'button',
        class: 'copy raw-toggle',
        'aria-pressed': 'false',
        text: 'Raw JSON',
        onclick: (event) => {
          const showRaw = pre.hidden;
          pre.hidden = !showRaw;
          view.hidden = showRaw;
          event.currentTarget.setAttribute('aria-pressed', String(showRaw));
          event.currentTarget.textContent = showRaw ? 'Table view' : 'Raw JSON';
        },
      })
    : null;
  return el(
    'details',
    { class: data.is_error ? 'tool-result error' : 'tool-result' },
    el('summary', { text: data.is_error ? 'Error' : 'Result' }),
    el('div', { class: 'result-view' }, view, pre, toggle, searchResults(data.content)),
  );
}

/** What the user decided, with their reason: the words the model reads instead stay out. */
function declinedView({ reason }) {
  return el(
    'p',
    { class: 'tool-result declined' },
    el('strong', { text: 'Declined' }),
    reason ? el('span', { class: 'declined-reason', text: `: ${reason}` }) : null,
  );
}

const isSearchResult = (block) => block?.type === 'search_result';

function resultText(content) {
  if (Array.isArray(content)) {
    return content
      .filter((b) => !isSearchResult(b))
      .map((b) => (b.type === 'text' ? prettyJson(b.text) : prettyJson(b)))
      .join('\n');
  }
  return prettyJson(content ?? '');
}

/** The records a result offers the model to cite (its search_result blocks), by title. */
function searchResults(content) {
  const found = Array.isArray(content) ? content.filter(isSearchResult) : [];
  if (!found.length) return null;
  return el(
    'div',
    { class: 'result-sources' },
    el('p', { class: 'result-caption', text: `Records the model can cite (${found.length})` }),
    el('ul', {}, ...found.map((b) => el('li', { text: b.title || b.source || 'record' }))),
  );
}

/** The result's data, or undefined when it is not JSON. */
export function parse(content) {
  let text = content;
  if (Array.isArray(content)) {
    const rest = content.filter((b) => !isSearchResult(b));
    if (rest.length !== 1 || rest[0].type !== 'text') return undefined;
    text = rest[0].text;
  }
  if (typeof text !== 'string') return text ?? undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

// Field names in words; `key` is named by what the result groups by.
const LABELS = {
  share_pct: 'Share',
  percent_used: 'Used',
  change_pct: 'Change',
  count: 'Transactions',
  total_spent: 'Total spent',
  days_elapsed: 'Days elapsed',
  days_in_month: 'Days in month',
};
let groupBy = null; // the result being drawn's group_by, naming its `key` column

function readable(data) {
  groupBy = isObject(data) && typeof data.group_by === 'string' ? data.group_by : null;
  const parts = section(data, null);
  return parts.length ? el('div', { class: 'readable' }, ...parts) : null;
}

/** Figures for the scalar fields, a table per list, a sub-section per nested object. */
function section(data, caption, outer = null) {
  if (Array.isArray(data)) return [listView(data, caption, outer)];
  if (!isObject(data)) return [el('p', { text: String(data) })];
  const currency = typeof data.currency === 'string' ? data.currency : outer;
  const parts = [];
  const scalars = Object.entries(data).filter(([, v]) => !isObject(v) && !Array.isArray(v));
  if (caption) parts.push(el('p', { class: 'result-caption', text: caption }));
  if (scalars.length) {
    parts.push(
      el(
        'dl',
        { class: 'figures' },
        ...scalars
          .filter(([k]) => !(k === 'currency' && scalars.some(([f, v]) => moneyField(f, v))))
          .map(([k, v]) => {
            const text = cell(k, v, currency);
            return el('div', { class: 'figure' }, el('dt', { text: label(k) }), el('dd', { class: tone(k, v, currency), text }));
          }),
      ),
    );
  }
  for (const [key, value] of Object.entries(data)) {
    if (Array.isArray(value)) parts.push(listView(value, label(key), currency));
    else if (isObject(value)) parts.push(...section(value, caption ? `${caption} › ${label(key)}` : label(key), currency));
  }
  return parts;
}

function listView(rows, caption, currency = null) {
  const objects = rows.length > 0 && rows.every(isObject);
  if (!objects) {
    const text = rows.length ? rows.map(show).join(', ') : 'none';
    const figure = el('div', { class: 'figure' }, el('dt', { text: caption || 'Items' }), el('dd', { text }));
    return el('dl', { class: 'figures' }, figure);
  }
  // Rows that hold lists of their own (e.g. per currency, its groups): a section per row.
  if (rows.some((row) => Object.values(row).some((v) => Array.isArray(v) && v.some(isObject)))) {
    return el(
      'div',
      { class: 'result-group' },
      ...rows.slice(0, MAX_ROWS).flatMap((row) => section(row, rowName(row, caption), currency)),
    );
  }
  let columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  // Amounts carry their row's currency, so a currency column would say it twice.
  if (columns.includes('currency') && columns.some((c) => rows.some((r) => moneyField(c, r[c])))) {
    columns = columns.filter((c) => c !== 'currency');
  }
  columns = columns.slice(0, MAX_COLUMNS);
  const shown = rows.slice(0, MAX_ROWS);
  const note = rows.length > shown.length ? ` (first ${shown.length} of ${rows.length})` : '';
  return el(
    'div',
    { class: 'table-wrap' },
    el(
      'table',
      { class: 'data-table' },
      caption || note ? el('caption', { class: 'result-caption', text: `${caption || ''}${note}` }) : null,
      el('thead', {}, el('tr', {}, ...columns.map((c) => el('th', { scope: 'col', text: label(c) })))),
      el(
        'tbody',
        {},
        ...shown.map((row) =>
          el(
            'tr',
            {},
            ...columns.map((c) => {
              const text = cell(c, row[c], row.currency ?? currency);
              const kind = NUMBER.test(text) ? 'number' : DATE.test(text) ? 'date' : null;
              return el('td', { class: [kind, tone(c, row[c], row.currency ?? currency)].filter(Boolean).join(' ') || null, text });
            }),
          ),
        ),
      ),
    ),
  );
}

/** `caption: <the row's first text value>`, naming one row of a list. */
function rowName(row, caption) {
  const first = Object.values(row).find((v) => typeof v === 'string');
  return [caption, first].filter(Boolean).join(': ');
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function label(key) {
  const named = key === 'key' ? groupBy || 'group' : LABELS[key] || key;
  const words = String(named).replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const isPercent = (key) => /(_pct|percent_used)$/.test(key);

/** True for an amount field: a decimal string that is not a percentage. */
function moneyField(key, value) {
  return isAmount(value) && String(value).includes('.') && !isPercent(key);
}

/** A value as the answers write it: amounts with separators and currency, percentages with %. */
function cell(key, value, currency) {
  if (isPercent(key) && value !== null && value !== undefined) return `${value}%`;
  if (currency && moneyField(key, value)) return formatAmount(value, currency);
  return show(value);
}

function tone(key, value, currency) {
  return currency && moneyField(key, value) && isNegative(value) ? 'amount negative' : null;
}

function show(value) {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
