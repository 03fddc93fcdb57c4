// A chart tool's result drawn as an SVG bar chart: the bars come from the Vega-Lite spec's data
// (computed by the server from the user's rows), each one a control that opens the rows it
// sums in the records panel; a table of the same figures serves screen readers and the curious.
// Every value is set as text or an attribute: data is never markup.

import { citeNode } from './cited.js';
import { el } from './dom.js';
import { formatAmount } from './money.js';

const SVG = 'http://www.w3.org/2000/svg';
const HEIGHT = 240;
const PAD = { top: 12, right: 8, bottom: 44, left: 8 };

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value != null) node.setAttribute(key, String(value));
  }
  node.append(...children.filter(Boolean));
  return node;
}

/** The Vega-Lite specs in a chart tool's result (`{ charts: [...] }`), or none. */
export function chartSpecs(result) {
  const charts = result && Array.isArray(result.charts) ? result.charts : [];
  return charts.filter(
    (c) => c && typeof c.$schema === 'string' && c.$schema.includes('vega-lite') && Array.isArray(c.data?.values),
  );
}

/** A figure for one spec: title, bars, legend and a table view. */
export function chartView(spec) {
  const values = spec.data.values.filter((v) => typeof v.y === 'number' && Number.isFinite(v.y));
  const currency = String(spec.currency || '');
  const series = [...new Set(values.map((v) => String(v.series ?? '')))];
  const xs = [...new Set(values.map((v) => String(v.x)))];
  const title = String(spec.title || 'Chart');
  const plot = el('div', { class: 'chart-plot' });
  const figure = el(
    'figure',
    { class: 'chart', 'aria-label': title },
    el('figcaption', { class: 'chart-title', text: title }),
    series.length > 1 ? legend(series) : null,
    plot,
    spec.note ? el('p', { class: 'chart-note', text: String(spec.note) }) : null,
    tableView(values, spec, series, currency),
  );
  const draw = () => {
    const width = Math.max(240, Math.round(plot.clientWidth || 600));
    if (String(width) === plot.dataset.width) return;
    plot.dataset.width = width;
    plot.replaceChildren(bars(values, xs, series, currency, spec, width));
  };
  draw();
  new ResizeObserver(() => draw()).observe(plot);
  return figure;
}

function legend(series) {
  return el(
    'ul',
    { class: 'chart-legend', 'aria-hidden': 'true' },
    ...series.map((name, i) => el('li', { class: `series-${i % 2}`, text: name })),
  );
}

/** The plot: one group of bars per x, a zero line, the x labels (thinned when crowded). */
function bars(values, xs, series, currency, spec, width) {
  const inner = width - PAD.left - PAD.right;
  const ys = values.map((v) => v.y);
  const top = Math.max(0, ...ys);
  const bottom = Math.min(0, ...ys);
  const span = top - bottom || 1;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const at = (y) => PAD.top + ((top - y) / span) * plotHeight;
  const band = inner / Math.max(1, xs.length);
  const gap = Math.min(8, band * 0.2);
  const barWidth = (band - gap) / series.length;
  const every = Math.ceil(xs.length / Math.max(1, Math.floor(inner / 56)));
  const root = svg('svg', {
    class: 'chart-svg',
    width,
    height: HEIGHT,
    viewBox: `0 0 ${width} ${HEIGHT}`,
    role: 'group',
    'aria-label': `${spec.title || 'Chart'}: each bar opens its records`,
  });
  const labels = []; // drawn over the bars
  for (const tick of ticks(top)) {
    root.append(svg('line', { class: 'chart-grid', x1: PAD.left, x2: width - PAD.right, y1: at(tick), y2: at(tick) }));
    const label = svg('text', { class: 'chart-y', x: PAD.left, y: at(tick) - 4 });
    label.textContent = formatAmount(String(tick), currency);
    labels.push(label);
  }
  root.append(svg('line', { class: 'chart-zero', x1: PAD.left, x2: width - PAD.right, y1: at(0), y2: at(0) }));
  if (spec.mark?.type === 'line') {
    // A line per series through the middle of each x's band; each point opens its records.
    series.forEach((name, s) => {
      const mine = values.filter((v) => String(v.series ?? '') === name);
      const points = mine.map((v) => `${PAD.left + xs.indexOf(String(v.x)) * band + band / 2},${at(v.y)}`);
      root.append(svg('polyline', { class: `chart-line series-${s % 2}`, points: points.join(' '), fill: 'none' }));
    });
  }
  xs.forEach((x, i) => {
    const left = PAD.left + i * band + gap / 2;
    if (i % every === 0) {
      const label = svg('text', { class: 'chart-x', x: left + (band - gap) / 2, y: HEIGHT - PAD.bottom + 16 });
      label.textContent = x;
      root.append(label);
    }
    for (const v of values.filter((row) => String(row.x) === x)) {
      const s = series.indexOf(String(v.series ?? ''));
      const y0 = at(Math.max(0, v.y));
      const h = Math.max(v.y === 0 ? 0 : 1, Math.abs(at(v.y) - at(0)));
      const words = `${x}${series.length > 1 ? ` ${v.series}` : ''}: ${formatAmount(v.amount, currency)}`;
      const rows = Number(v.count) || 0;
      const bar = spec.mark?.type === 'line'
        ? svg('circle', { class: `chart-dot series-${s % 2}`, cx: PAD.left + i * band + band / 2, cy: at(v.y), r: 3 })
        : svg('rect', {
        class: `chart-bar series-${s % 2}${v.y < 0 ? ' negative' : ''}`,
        x: left + s * barWidth,
        y: v.y >= 0 ? y0 : at(0),
        width: Math.max(1, barWidth - 1),
        height: h,
        rx: 2,
      });
      const hit = svg('g', { class: 'chart-point' }, bar, svg('title', {}, document.createTextNode(words)));
      const sources = Array.isArray(v.sources) ? v.sources.map(String) : [];
      if (sources.length && rows) {
        hit.classList.add('cite');
        hit.setAttribute('role', 'button');
        hit.setAttribute('tabindex', '0');
        hit.setAttribute('aria-label', `${words}, ${rows} ${rows === 1 ? 'transaction' : 'transactions'}. Show the records.`);
        hit.setAttribute('aria-controls', 'sources');
        citeNode(hit, sources.map((source) => ({ source, title: `${x} ${v.series || ''}`.trim() })), words);
      }
      root.append(hit);
    }
  });
  root.append(...labels);
  return root;
}

/** Round gridline values under `top`: a half and a whole of a round step. */
function ticks(top) {
  if (top <= 0) return [];
  const power = 10 ** Math.floor(Math.log10(top));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => top / s <= 2.2) || power * 10;
  return [step, 2 * step].filter((t) => t <= top * 1.001);
}

/** The chart's figures as a table, folded under the chart. */
function tableView(values, spec, series, currency) {
  const xTitle = String(spec.encoding?.x?.title || 'Period');
  const xs = [...new Set(values.map((v) => String(v.x)))];
  const cell = (x, s) => values.find((v) => String(v.x) === x && String(v.series ?? '') === s);
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
          ...series.map((s) => el('td', { class: 'number', text: formatAmount(cell(x, s)?.amount ?? '', currency) }))))),
      ),
    ),
  );
}
