// An answer's tool use folded into one line ("Looked up transactions, budgets") that opens to
// its calls; under it a status line with the model's newest progress note; approval cards sit
// under the line, outside the fold, so they stay in view.

import { el } from './dom.js';

// Each tool in words: what it looks up (the fold's line) and what a call of it is called.
const TOOLS = {
  get_transactions: { topic: 'transactions', title: 'Transactions' },
  get_spending_summary: { topic: 'spending', title: 'Spending summary' },
  get_account_balances: { topic: 'account balances', title: 'Account balances' },
  get_budget_status: { topic: 'budgets', title: 'Budget status' },
  compare_spending: { topic: 'spending compared', title: 'Spending compared' },
  find_recurring_payments: { topic: 'recurring payments', title: 'Recurring payments' },
  chart: { topic: 'a chart', title: 'Chart' },
  set_budget: { topic: 'a budget change', title: 'Change a budget', write: true },
  categorize_transaction: { topic: 'a category change', title: 'Change a transaction’s category', write: true },
  categorize_transactions: { topic: 'a category change', title: 'Categorize several transactions', write: true },
};

/** The tool `name` in words: `{ topic, title, write }`; an unknown tool keeps its name. */
export function toolWords(name) {
  const known = TOOLS[name];
  if (known) return { write: false, ...known };
  const words = String(name || 'tool').replace(/_/g, ' ');
  return { topic: words, title: words.charAt(0).toUpperCase() + words.slice(1), write: false };
}

export class ToolFold {
  constructor() {
    this.calls = [];
    this.line = el('span', { class: 'fold-line' });
    this.count = el('span', { class: 'fold-count' });
    this.list = el('div', { class: 'fold-calls' });
    this.details = el(
      'details',
      { class: 'tool-fold' },
      el('summary', {}, this.line, this.count),
      this.list,
    );
    // No calls yet (a note came first, or the answer needs none): only the status line shows.
    this.details.hidden = true;
    this.status = el('p', { class: 'fold-status', role: 'status' });
    this.approvals = el('div', { class: 'fold-approvals' });
    this.charts = el('div', { class: 'fold-charts' });
    this.el = el('div', { class: 'tool-use' }, this.details, this.status, this.approvals, this.charts);
  }

  /** Show the model's newest progress note (text, never markup) as the status line. */
  progress(text) {
    this.status.textContent = text;
  }

  /** Add a call's view (anything with `el`, `name` and `state`) at the end of the fold. */
  add(view) {
    this.calls.push(view);
    this.list.append(view.el);
    this.refresh();
  }

  /** Show the charts a call's result carries (figures), under the line: they are the answer's. */
  showCharts(toolUseId, figures) {
    this.dropCharts(toolUseId);
    for (const figure of figures) {
      figure.dataset.toolUseId = toolUseId;
      this.charts.append(figure);
    }
  }

  dropCharts(toolUseId) {
    for (const figure of [...this.charts.children]) {
      if (figure.dataset.toolUseId === toolUseId) figure.remove();
    }
  }

  /** Show `view` in place of `old`, a call's view sent again with the same block id. */
  replace(old, view) {
    const at = this.calls.indexOf(old);
    if (at >= 0) this.calls[at] = view;
    view.onState = () => this.refresh();
    this.refresh();
  }

  /** Drop the calls `keep(view)` rejects; true when nothing is left to show. */
  drop(keep) {
    for (const view of this.calls.filter((v) => !keep(v))) view.el.remove();
    this.calls = this.calls.filter(keep);
    this.refresh();
    return (
      !this.calls.length && !this.approvals.firstChild && !this.charts.firstChild && !this.status.textContent
    );
  }

  /** Redraw the line from the calls' names and states. */
  refresh() {
    this.details.hidden = !this.calls.length;
    const words = this.calls.map((v) => toolWords(v.name));
    const topics = [...new Set(words.filter((w) => !w.write).map((w) => w.topic))];
    const changes = [...new Set(words.filter((w) => w.write).map((w) => w.title.toLowerCase()))];
    const running = this.calls.some((v) => v.running);
    const failed = this.calls.filter((v) => v.failed).length;
    const parts = [];
    if (topics.length || !changes.length) {
      const what = topics.length ? topics.join(', ') : 'tools';
      parts.push(running ? `Looking up ${what}…` : `Looked up ${what}`);
    }
    // A change is asked for, not looked up: its card under the line says where it stands.
    if (changes.length) parts.push(`${parts.length ? 'asked to' : 'Asked to'} ${changes.join(', ')}`);
    this.line.textContent = parts.join('; ');
    const n = this.calls.length;
    const counts = [`${n} ${n === 1 ? 'call' : 'calls'}`];
    if (failed) counts.push(`${failed} failed`);
    this.count.textContent = ` · ${counts.join(', ')}`;
    this.details.classList.toggle('failed', failed > 0);
  }
}
