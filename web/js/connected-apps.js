// Connected apps: the apps (Claude, ChatGPT...) the user let reach their finances over /mcp,
// each with its scopes and last use and a Revoke button; above them, the changes those apps
// asked for, as approval cards (approvals.js) to approve or decline. A modal dialog (Esc
// closes it); every value from the server is inserted as text. While it is open and a change
// waits, it asks the server again every PAGE_POLL_MS (another tab, or the app, may decide).

import { api } from './rest.js';
import { el } from './dom.js';
import { ApprovalCard } from './approvals.js';
import { PAGE_POLL_MS } from './protocol.js';
import { errorText } from './words.js';

const SCOPES = { read: 'read your finances', write: 'ask to change them (you approve each change)' };

export class ConnectedAppsPanel {
  /** Open the panel from the `opener` button; its label counts the changes that wait. */
  constructor(opener) {
    this.opener = opener;
    this.label = opener.textContent;
    this.body = el('div', { id: 'apps-body', class: 'tools-body' });
    const close = el('button', {
      type: 'button', class: 'icon-button', id: 'apps-close', 'aria-label': 'Close connected apps', text: '✕',
    });
    this.dialog = el(
      'dialog',
      { id: 'apps-panel', class: 'dialog tools-panel', 'aria-labelledby': 'apps-title' },
      el('div', { class: 'tools-head' }, el('h2', { id: 'apps-title', text: 'Connected apps' }), close),
      this.body,
    );
    document.body.append(this.dialog);
    this.timer = 0;
    close.addEventListener('click', () => this.dialog.close());
    this.dialog.addEventListener('close', () => {
      clearTimeout(this.timer);
      this.opener.focus();
    });
    opener.addEventListener('click', () => this.open());
  }

  /** Show the panel and load the apps and the changes they asked for. */
  async open() {
    if (!this.dialog.open) this.dialog.showModal();
    await this.load();
  }

  /** Count the waiting changes on the button (at sign-in). */
  async count() {
    try {
      this.badge((await api.connectorActions()).actions);
    } catch {
      // Not signed in yet, or offline: the panel says so when opened.
    }
  }

  badge(actions) {
    const waiting = actions.filter((a) => a.status === 'awaiting_approval').length;
    this.opener.textContent = waiting ? `${this.label} (${waiting} waiting)` : this.label;
    return waiting;
  }

  async load() {
    clearTimeout(this.timer);
    let apps;
    let actions;
    try {
      [apps, actions] = await Promise.all([api.connectedApps(), api.connectorActions()]);
    } catch (err) {
      this.body.replaceChildren(el('p', { class: 'error', role: 'alert', text: errorText(err.code, err.message) }));
      return;
    }
    const waiting = this.badge(actions.actions);
    this.body.replaceChildren(
      this.changes(actions.actions),
      apps.apps.length
        ? el('ul', { class: 'tools-list apps-list' }, ...apps.apps.map((app) => this.appView(app)))
        : el('p', { class: 'muted', text: 'No app is connected. Add this server in Claude or ChatGPT as a connector: see the docs.' }),
    );
    if (waiting && this.dialog.open) this.timer = setTimeout(() => this.load(), PAGE_POLL_MS);
  }

  /** The changes apps asked for and the user has not decided, as approval cards. */
  changes(actions) {
    const waiting = actions.filter((a) => a.status === 'awaiting_approval');
    if (!waiting.length) return null;
    const cards = waiting.map((action) => {
      const card = new ApprovalCard({ ...action, tool_use_id: action.id, turn_id: null }, (c, approved, reason) =>
        this.decide(c, action.id, approved, reason),
      );
      card.el.prepend(el('p', { class: 'approval-client', text: `${action.client} asks:` }));
      return card.el;
    });
    return el('section', { class: 'apps-changes' }, el('h3', { text: 'Waiting for your approval' }), ...cards);
  }

  async decide(card, id, approved, reason) {
    card.busy();
    try {
      card.decide(await api.decideAction(id, { approved, reason }), { focus: true });
    } catch (err) {
      card.pending();
      card.state.textContent = errorText(err.code, err.message);
    }
  }

  appView(app) {
    const used = app.last_used_at ? `last used ${new Date(app.last_used_at).toLocaleString()}` : 'not used yet';
    const revoke = el('button', {
      type: 'button',
      class: 'tool-button danger revoke-app',
      text: 'Revoke',
      'aria-label': `Revoke ${app.name}: its access ends at once`,
      onclick: () => this.revoke(app, revoke),
    });
    return el(
      'li',
      { class: 'tools-tool app', dataset: { app: String(app.id) } },
      el('p', { class: 'tools-tool-head' }, el('strong', { class: 'app-name', text: app.name }), revoke),
      el('p', { class: 'muted app-hosts', text: `Returns to ${app.redirect_hosts.join(', ')} · ${used}` }),
      el('p', { class: 'app-scopes', text: `May ${app.scopes.map((s) => SCOPES[s] || s).join(' and ')}.` }),
    );
  }

  async revoke(app, button) {
    button.disabled = true;
    try {
      await api.revokeApp(app.id);
    } catch (err) {
      button.disabled = false;
      if (err.status !== 404) {
        this.body.prepend(el('p', { class: 'error', role: 'alert', text: errorText(err.code, err.message) }));
        return;
      }
    }
    await this.load();
  }
}
