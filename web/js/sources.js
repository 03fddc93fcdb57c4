// The cited records panel: clicking a cited figure (or Enter on it) lists the records its
// citations point at, fetched with the user's token from the record endpoints, with the total
// per currency of the transactions shown, so a figure can be checked at a glance. A right-hand
// panel on a laptop, a bottom sheet on a phone; Esc or ✕ closes it and the focus goes back.

import { formatAmount, isNegative } from './money.js';
import { api } from './rest.js';
import { citedBy } from './cited.js';
import { el } from './dom.js';
import { errorText } from './words.js';
import { flowLine } from './flow-marks.js';

const $ = (id) => document.getElementById(id);
const GONE = 'This record is no longer available';

export class SourcesPanel {
  /** Listen for cited figures in `root` (the turns); a record that fails to load says so inline. */
  constructor(root) {
    this.box = $('sources');
    this.title = $('sources-title');
    this.quote = $('sources-quote');
    this.body = $('sources-body');
    this.root = root;
    this.trigger = null;
    this.shown = null; // the citations and text of the figure whose records are open
    this.loads = 0;
    $('sources-close').addEventListener('click', () => this.close());
    root.addEventListener('click', (event) => {
      const span = event.target.closest('.cite');
      if (span && citedBy(span)) this.open(span);
    });
    root.addEventListener('keydown', (event) => {
      const span = event.target.closest?.('.cite[role="button"]');
      if (!span || (event.key !== 'Enter' && event.key !== ' ')) return;
      event.preventDefault();
      this.open(span);
    });
    // Another chat drawn (or this one drawn again): follow the figure, or close if it is gone.
    new MutationObserver(() => {
      if (this.box.hidden || this.trigger?.isConnected) return;
      this.trigger = this.relocate();
      if (this.trigger) this.mark(true);
      else this.close({ focus: false });
    }).observe(root, { childList: true });
    // Registered before the page's own Esc (stop the answer): with the panel open, Esc closes it.
    document.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape' || this.box.hidden || event.defaultPrevented) return;
      if (document.querySelector('dialog[open]')) return;
      event.preventDefault();
      this.close();
    });
  }

  /** Show the records behind the cited figure `span`. */
  async open(span) {
    this.shown = citedBy(span);
    const { citations, text } = this.shown;
    this.mark(false);
    this.trigger = first(span);
    this.mark(true);
    this.quote.textContent = text;
    this.body.replaceChildren(el('p', { class: 'muted', role: 'status', text: 'Loading the records…' }));
    this.box.hidden = false;
    document.body.classList.add('sources-open');
    this.title.focus();
    const load = ++this.loads;
    const sources = distinct(citations);
    const found = await Promise.allSettled(sources.map((c) => api.source(c.source)));
    if (load !== this.loads || this.box.hidden) return;
    this.draw(sources, found);
  }

  /** Draw the records; a list cut to a page offers its next page below the table. */
  draw(sources, found) {
    const cut = found.some((f) => f.status === 'fulfilled' && f.value?.next_cursor);
    const more = cut
      ? el('button', { type: 'button', class: 'tool-button sources-more', text: 'Show more transactions' })
      : null;
    more?.addEventListener('click', () => this.more(sources, found, more));
    this.body.replaceChildren(...view(sources, found, more).filter(Boolean));
  }

  /** Fetch the next page of every cut list and draw them all; the focus stays on "more". */
  async more(sources, found, button) {
    const load = this.loads;
    button.disabled = true;
    button.textContent = 'Loading…';
    const pages = await Promise.allSettled(
      found.map((f, i) => (f.value?.next_cursor ? api.source(sources[i].source, f.value.next_cursor) : null)),
    );
    if (load !== this.loads || this.box.hidden) return;
    const grown = found.map((f, i) => {
      const page = pages[i];
      if (!f.value?.next_cursor) return f;
      // A page that failed to load keeps what is shown and its cursor: "more" tries it again.
      if (page.status === 'rejected') return f;
      const rows = [...f.value.transactions, ...page.value.transactions];
      return { status: 'fulfilled', value: { ...page.value, transactions: rows } };
    });
    this.draw(sources, grown);
    (this.body.querySelector('.sources-more') || this.title).focus();
  }

  /** Close the panel; the focus goes back to the figure (or the message box, if it is gone). */
  close({ focus = true } = {}) {
    if (this.box.hidden) return;
    this.loads += 1;
    this.box.hidden = true;
    document.body.classList.remove('sources-open');
    if (!this.trigger?.isConnected) this.trigger = this.relocate();
    this.mark(false);
    const back = this.trigger || $('message');
    this.trigger = null;
    if (focus) back.focus();
  }

  /** The figure shown now for the one opened (an answer is drawn anew as it streams or reloads). */
  relocate() {
    const want = JSON.stringify(this.shown?.citations);
    const same = (span) =>
      citedBy(span)?.text === this.shown?.text && JSON.stringify(citedBy(span).citations) === want;
    return [...this.root.querySelectorAll('.cite[role="button"]')].find(same) || null;
  }

  /** Show the figure whose records are open as such (every span of it). */
  mark(open) {
    if (!this.trigger) return;
    this.trigger.setAttribute('aria-expanded', String(open));
    for (const span of group(this.trigger)) span.classList.toggle('open', open);
  }
}

/** The spans of the cited text `span` belongs to (one per text node it covers). */
function group(span) {
  const { citations } = citedBy(span);
  const spans = [...(span.closest('.markdown, .chart')?.querySelectorAll('.cite') || [])];
  return spans.filter((s) => citedBy(s)?.citations === citations);
}

/** The focusable first span of the cited text `span` belongs to. */
function first(span) {
  return group(span).find((s) => s.getAttribute('role') === 'button') || span;
}

/** One citation per source, in the order cited. */
function distinct(citations) {
  const seen = new Map();
  for (const c of citations) if (c.source && !seen.has(c.source)) seen.set(c.source, c);
  return [...seen.values()];
}

/** What a record endpoint returned (docs/api.md), as lists of transactions, accounts and budgets. */
function records(source, data) {
  const kind = source.slice(0, source.indexOf(':'));
  if (kind === 'txns') return { transactions: data.transactions || [], count: data.count, totals: data.totals };
  if (kind === 'txn') return { transactions: [data], count: 1 };
  if (kind === 'account') return { accounts: [data], count: 1 };
  return { budgets: [data], count: 1 };
}

function view(sources, found, more = null) {
  const transactions = new Map();
  const accounts = new Map();
  const budgets = new Map();
  const notes = sources.map((citation, i) => {
    const result = found[i];
    const name = citation.title || citation.source;
    if (result.status === 'rejected') {
      const err = result.reason;
      const words = err.status === 404 ? GONE : errorText(err.code, err.message);
      return el('li', { class: 'source-note gone', dataset: { source: citation.source } }, `${name}: `, el('em', { text: words }));
    }
    const got = records(citation.source, result.value || {});
    for (const row of got.transactions || []) transactions.set(row.id ?? transactions.size, row);
    for (const row of got.accounts || []) accounts.set(row.id ?? accounts.size, row);
    for (const row of got.budgets || []) budgets.set(row.id ?? budgets.size, row);
    const shown = (got.transactions || got.accounts || got.budgets).length;
    const size = got.totals ? ` (${countWords(shown, got.count ?? shown)})` : '';
    const all = shown < got.count ? allTotals(got.totals) : null;
    return el('li', { class: 'source-note', dataset: { source: citation.source } }, `${name}${size}`, all);
  });
  return [
    transactions.size ? transactionTable([...transactions.values()], Boolean(more)) : null,
    more,
    accounts.size ? accountTable([...accounts.values()]) : null,
    ...[...budgets.values()].map(budgetFigures),
    el('h3', { class: 'sources-sub', text: 'Cited sources' }),
    el('ul', { class: 'source-notes' }, ...notes),
  ];
}

function countWords(shown, count) {
  const noun = count === 1 ? 'transaction' : 'transactions';
  return shown < count ? `first ${shown} of ${count} ${noun}` : `${count} ${noun}`;
}

/** A list cut to a page: what all its rows come to, from the server's totals. */
function allTotals(totals) {
  const words = (totals || []).map((t) => `${t.net} ${t.currency}`).join(', ');
  return words ? el('span', { class: 'all-totals', text: `; all of them: ${words}` }) : null;
}

function amountCell(amount, currency) {
  const text = amount == null ? '—' : formatAmount(amount, currency);
  const negative = isNegative(amount);
  return el('td', { class: negative ? 'number amount negative' : 'number amount', text });
}

/** The cited transactions; `cut`: more rows than these, so the totals say they are of these. */
function transactionTable(rows, cut) {
  const body = rows.map((row) =>
    el(
      'tr',
      { dataset: { id: String(row.id ?? '') } },
      el('td', { class: 'date', text: row.date || '—' }),
      el(
        'td',
        { class: 'merchant' },
        el('span', { text: row.merchant || row.description || '—' }),
        row.pending ? el('span', { class: 'pending', text: ' (pending)' }) : null,
        el('span', { class: 'where', text: [row.category, row.account].filter(Boolean).join(' · ') }),
        row.flow ? flowLine(row) : null,
      ),
      amountCell(row.amount, row.currency),
    ),
  );
  const of = cut ? ` of the ${rows.length} shown` : '';
  return table('Cited transactions', ['Date', 'Merchant', 'Amount'], body, totals(rows, 'amount'), of);
}

function accountTable(rows) {
  const body = rows.map((row) =>
    el(
      'tr',
      { dataset: { id: String(row.id ?? '') } },
      el('td', { text: row.name || '—' }),
      el('td', { text: row.kind || '' }),
      amountCell(row.balance, row.currency),
    ),
  );
  return table('Cited accounts', ['Account', 'Kind', 'Balance'], body, totals(rows, 'balance'));
}

function budgetFigures(row) {
  const figures = Object.entries(row)
    .filter(([key, value]) => key !== 'id' && (value === null || typeof value !== 'object'))
    .map(([key, value]) =>
      el('div', { class: 'figure' }, el('dt', { text: key.replace(/_/g, ' ') }), el('dd', { text: String(value ?? '—') })),
    );
  return el('section', { class: 'source-budget', 'aria-label': `Budget ${row.category || ''}` }, el('dl', { class: 'figures' }, ...figures));
}

function table(caption, columns, rows, sums, of = '') {
  return el(
    'div',
    { class: 'table-wrap' },
    el(
      'table',
      { class: 'data-table sources-table' },
      el('caption', { class: 'result-caption', text: caption }),
      el('thead', {}, el('tr', {}, ...columns.map((text) => el('th', { scope: 'col', text })))),
      el('tbody', {}, ...rows),
      el(
        'tfoot',
        {},
        ...sums.map(([currency, sum]) =>
          el(
            'tr',
            { class: 'sources-total', dataset: { currency } },
            el('th', { scope: 'row', colspan: columns.length - 1, text: `Total ${currency}${of}`.trim() }),
            amountCell(sum, currency),
          ),
        ),
      ),
    ),
  );
}

/** `[[currency, sum]]` of `field` over `rows`, added exactly in the amounts' own decimals. */
function totals(rows, field) {
  const by = new Map();
  for (const row of rows) {
    const value = String(row[field] ?? '').trim();
    if (!/^-?\d+(?:\.\d+)?$/.test(value)) continue;
    const currency = row.currency || '';
    by.set(currency, [...(by.get(currency) || []), value]);
  }
  return [...by].map(([currency, values]) => [currency, addDecimals(values)]);
}

function addDecimals(values) {
  const scale = Math.max(...values.map((v) => (v.split('.')[1] || '').length));
  const units = (v) => {
    const [whole, frac = ''] = v.replace('-', '').split('.');
    const n = BigInt(whole + frac.padEnd(scale, '0'));
    return v.startsWith('-') ? -n : n;
  };
  const sum = values.reduce((total, v) => total + units(v), 0n);
  const digits = (sum < 0n ? -sum : sum).toString().padStart(scale + 1, '0');
  const text = scale ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  return sum < 0n ? `-${text}` : text;
}
