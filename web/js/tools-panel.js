// The tools panel: where the model's tools come from (built in, the operator's Python modules,
// each MCP server with whether it answers now) and, per tool, whether it runs on its own or
// waits for the user's approval. A modal dialog (Esc closes it, the focus goes back); every
// value from the server is inserted as text.

import { api } from './rest.js';
import { el } from './dom.js';
import { errorText } from './words.js';

const KINDS = { 'built-in': 'Built in', python: 'Python module', mcp: 'MCP server' };
const STATES = { up: 'connected', connecting: 'connecting', down: 'down' };

export class ToolsPanel {
  /** Open the panel from the `opener` button. */
  constructor(opener) {
    this.opener = opener;
    this.body = el('div', { id: 'tools-body', class: 'tools-body' });
    const close = el('button', {
      type: 'button', class: 'icon-button', id: 'tools-close', 'aria-label': 'Close the tools', text: '✕',
    });
    this.dialog = el(
      'dialog',
      { id: 'tools-panel', class: 'dialog tools-panel', 'aria-labelledby': 'tools-title' },
      el('div', { class: 'tools-head' }, el('h2', { id: 'tools-title', text: 'Tools' }), close),
      this.body,
    );
    document.body.append(this.dialog);
    this.loads = 0;
    close.addEventListener('click', () => this.dialog.close());
    this.dialog.addEventListener('close', () => this.opener.focus());
    opener.addEventListener('click', () => this.open());
  }

  /** Show the panel and (re)load the sources: a server's state may have changed since. */
  async open() {
    this.body.replaceChildren(el('p', { class: 'muted', role: 'status', text: 'Loading the tools…' }));
    if (!this.dialog.open) this.dialog.showModal();
    const load = ++this.loads;
    let sources;
    try {
      sources = (await api.tools()).sources;
    } catch (err) {
      if (load === this.loads) this.body.replaceChildren(el('p', { class: 'error', role: 'alert', text: errorText(err) }));
      return;
    }
    if (load !== this.loads) return;
    this.body.replaceChildren(...sources.filter((s) => s.kind === 'mcp' || s.tools.length).map(sourceView));
  }
}

function sourceView(source) {
  const state = STATES[source.state] ?? source.state;
  const title = source.kind === 'mcp' ? `${KINDS.mcp} ${source.name}` : KINDS[source.kind] ?? source.name;
  const head = el(
    'h3',
    { class: 'tools-source-name' },
    title,
    source.kind === 'mcp' ? el('span', { class: `tools-state ${source.state}`, text: state }) : null,
    el('span', { class: 'tools-count', text: count(source.tools.length) }),
  );
  const tools = source.tools.length
    ? el('ul', { class: 'tools-list' }, ...source.tools.map(toolView))
    : el('p', { class: 'muted', text: source.state === 'up' ? 'No tools.' : 'Its tools show once it answers.' });
  return el('section', { class: 'tools-source', dataset: { kind: source.kind, name: source.name, state: source.state } }, head, tools);
}

function count(n) {
  return n === 1 ? '1 tool' : `${n} tools`;
}

/** One tool: its name and whether it asks first; its description folded under it. */
function toolView(tool) {
  const approval = tool.read_only
    ? el('span', { class: 'tools-mode read', text: 'read-only' })
    : el('span', { class: 'tools-mode write', text: 'needs approval' });
  return el(
    'li',
    { class: 'tools-tool', dataset: { tool: tool.name } },
    el(
      'details',
      {},
      el('summary', { class: 'tools-tool-head' }, el('code', { class: 'tools-tool-name', text: tool.remote ?? tool.name }), approval),
      el('p', { class: 'tools-tool-text', text: tool.description || 'No description.' }),
    ),
  );
}
