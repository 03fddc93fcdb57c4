// A chart tool's result drawn by vega-embed from its Vega-Lite spec: the spec is the chart's one
// definition (the server draws the Markdown export from it too), so there is no code per chart
// type here. Coloured from the page's CSS variables, light or dark; every bar, slice or recorded
// point with rows is a cited figure (click, Enter or Space opens its rows in the records panel);
// a table of the same figures serves screen readers and the curious. Data is never markup:
// vega sets each label as SVG text, the tooltip is set as text, the table too.

import { citeNode } from './cited.js';
import { el } from './dom.js';
import { formatAmount, isAmount } from './money.js';
import { loadVega, themed } from './vega.js';

const HEIGHT = 220;
const NARROW = 520; // below this many pixels, legends take two columns instead of four
const MARKS = '.mark-rect path, .mark-symbol path, .mark-arc path'; // bars, points, slices
const redraws = new WeakMap(); // figure -> draw it again (the theme changed)

/** The Vega-Lite specs in a chart tool's result (`{ charts: [...] }`), or none. */
export function chartSpecs(result) {
  const charts = result && Array.isArray(result.charts) ? result.charts : [];
  return charts.filter(
    (c) => c && typeof c.$schema === 'string' && c.$schema.includes('vega-lite') && Array.isArray(c.data?.values),
  );
}

/** A figure for one spec: its title, the chart vega-embed draws, its note and a table view. */
export function chartView(spec) {
  const title = String(spec.title || 'Chart');
  const plot = el('div', { class: 'chart-plot' });
  const figure = el(
    'figure',
    { class: 'chart', 'aria-label': title },
    el('figcaption', { class: 'chart-title', text: title }),
    plot,
    spec.note ? el('p', { class: 'chart-note', text: String(spec.note) }) : null,
    tableView(spec),
  );
  const chart = new Drawn(figure, plot, spec);
  redraws.set(figure, () => chart.draw());
  new ResizeObserver(() => chart.fit()).observe(plot);
  return figure;
}

/** One figure's vega view: drawn when it has a width, again when its theme or layout changes. */
class Drawn {
  constructor(figure, plot, spec) {
    Object.assign(this, { figure, plot, spec, result: null, narrow: null, width: 0 });
    this.queue = Promise.resolve(); // draws run one after another
    this.tip = el('div', { class: 'chart-tip', role: 'tooltip', hidden: true });
  }

  /** The plot's width changed: draw it the first time, else resize the view it has. */
  fit() {
    const width = Math.floor(this.plot.clientWidth);
    if (!width || width === this.width) return;
    this.width = width;
    if (!this.result || width < NARROW !== this.narrow) this.draw();
    else this.queue = this.queue.then(() => this.result?.view.width(width).runAsync());
  }

  draw() {
    this.queue = this.queue.then(() => this.embed()).catch((err) => this.failed(err));
    return this.queue;
  }

  async embed() {
    if (!this.width) return;
    const { embed, template } = await loadVega();
    this.result?.finalize();
    this.narrow = this.width < NARROW;
    const config = themed(template);
    config.legend = { ...config.legend, columns: this.narrow ? 2 : 4 };
    const shown = {
      ...this.spec,
      title: undefined, // the figure's caption says it, and wraps on a phone
      width: this.width,
      height: HEIGHT,
      autosize: { type: 'fit-x', contains: 'padding' },
    };
    this.result = await embed(clearable(this.plot), shown, {
      renderer: 'svg',
      actions: false,
      ast: true, // vega's expression interpreter: the page's policy allows no eval
      defaultStyle: false, // no <style> element: the page's policy allows only its stylesheet
      config,
      tooltip: (handler, event, item, value) => this.tooltip(event, value),
    });
    this.plot.append(this.tip);
    cite(this.plot, this.spec);
  }

  failed(err) {
    console.error('chart not drawn', err);
    this.plot.replaceChildren(
      el('p', { class: 'chart-failed', text: 'The chart could not be drawn: its figures are in the table below.' }),
    );
  }

  /** vega's tooltip handler: the hovered figure's fields, set as text. */
  tooltip(event, value) {
    if (value == null || typeof value !== 'object') {
      this.tip.hidden = true;
      return;
    }
    this.tip.textContent = Object.entries(value)
      .map(([key, v]) => `${key}: ${isAmount(String(v)) ? formatAmount(String(v)) : v}`)
      .join('\n');
    this.tip.hidden = false;
    const box = this.figure.getBoundingClientRect();
    const left = Math.min(event.clientX - box.left + 12, box.width - this.tip.offsetWidth - 4);
    this.tip.style.left = `${Math.max(4, left)}px`;
    this.tip.style.top = `${event.clientY - box.top + 14}px`;
  }
}

/**
 * `node`, cleared by vega-embed before it draws: it does so with `innerHTML = ''`, which the
 * page's Trusted Types policy refuses for any string. This node alone takes an empty string
 * (and nothing else) as "remove the children"; the page's policy stays as it is.
 */
function clearable(node) {
  if (!Object.hasOwn(node, 'innerHTML')) {
    Object.defineProperty(node, 'innerHTML', {
      get: () => '',
      set(html) {
        if (html !== '') throw new TypeError('a chart is never drawn from markup');
        node.replaceChildren();
      },
    });
  }
  return node;
}

/** Make each drawn bar, slice or recorded point that has rows a cited figure that opens them. */
function cite(plot, spec) {
  const currency = String(spec.currency || '');
  const several = new Set(spec.data.values.map((v) => String(v.series ?? ''))).size > 1;
  for (const node of plot.querySelectorAll(MARKS)) {
    const datum = node.__data__?.datum; // the spec's row vega drew this item from
    const sources = Array.isArray(datum?.sources) ? datum.sources.map(String) : [];
    const rows = Number(datum?.count) || 0;
    if (!sources.length || !rows || datum.projected) continue;
    const x = String(datum.x ?? '');
    const words = `${x}${several ? ` ${datum.series}` : ''}: ${formatAmount(datum.amount, currency)}`;
    node.classList.add('cite');
    node.setAttribute('role', 'button');
    node.setAttribute('tabindex', '0');
    node.setAttribute('aria-controls', 'sources');
    node.setAttribute('aria-label', `${words}, ${rows} ${rows === 1 ? 'transaction' : 'transactions'}. Show the records.`);
    citeNode(node, sources.map((source) => ({ source, title: `${x} ${datum.series || ''}`.trim() })), words);
  }
}

/** The chart's figures as a table, folded under the chart: a row per x, a column per series. */
function tableView(spec) {
  const currency = String(spec.currency || '');
  const encoding = spec.encoding || {};
  const xTitle = String(encoding.x?.title || encoding.color?.title || 'Item');
  const cells = new Map(); // "x\u0000series" -> the first row (a projection repeats one)
  for (const v of spec.data.values) {
    const key = `${v.x}\u0000${v.series ?? ''}`;
    if (!cells.has(key)) cells.set(key, v);
  }
  const rows = [...cells.values()];
  const xs = [...new Set(rows.map((v) => String(v.x)))];
  const series = [...new Set(rows.map((v) => String(v.series ?? '')))];
  const cell = (x, s) => {
    const v = cells.get(`${x}\u0000${s}`);
    const text = v ? formatAmount(v.amount ?? '', currency) : '';
    return el('td', { class: 'number', text: v?.projected ? `${text} (projected)` : text });
  };
  return el(
    'details',
    { class: 'chart-table' },
    el('summary', { text: 'Show as a table' }),
    el(
      'div',
      { class: 'table-wrap' },
      el(
        'table',
        { class: 'data-table' },
        el('caption', { class: 'visually-hidden', text: String(spec.title || '') }),
        el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: xTitle }),
          ...series.map((s) => el('th', { scope: 'col', text: s || 'Amount' })))),
        el('tbody', {}, ...xs.map((x) => el('tr', {}, el('th', { scope: 'row', text: x }),
          ...series.map((s) => cell(x, s))))),
      ),
    ),
  );
}

// Light or dark changed (web/js/theme.js sets data-theme): draw every chart in its new colours.
new MutationObserver(() => {
  for (const figure of document.querySelectorAll('figure.chart')) redraws.get(figure)?.();
}).observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
