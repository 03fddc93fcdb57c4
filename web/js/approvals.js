// Approval cards: an action the assistant wants to take on the user's data (a side-effect
// tool call), with what would change, Approve and Decline (with an optional reason). The
// server keeps the request, so a card is drawn again on reload and in every tab; a tab that
// did not decide learns the decision by polling while a card waits (every PAGE_POLL_MS, the
// server's config.Timings.page_poll).

import { api } from './rest.js';
import { el } from './dom.js';
import { toolWords } from './tool-fold.js';
import { PAGE_POLL_MS } from './protocol.js';

/** One approval's card; `onDecide(card, approved, reason, always)` posts the decision. */
export class ApprovalCard {
  constructor(request, onDecide) {
    Object.assign(this, { request, onDecide, turnId: request.turn_id, toolUseId: request.tool_use_id });
    const preview = request.preview || {};
    const title = toolWords(request.name).title;
    this.state = el('p', { class: 'approval-state', tabindex: '-1', role: 'status' });
    this.buttons = el('div', { class: 'approval-buttons' });
    this.el = el(
      'section',
      { class: 'approval-card', 'aria-label': title, dataset: { toolUseId: request.tool_use_id, state: 'pending' } },
      el('h3', { class: 'approval-title', text: title }),
      el('p', { class: 'approval-summary', text: preview.summary || `Run ${request.name}` }),
      changesTable(preview.changes || []),
      remoteCall(preview),
      this.state,
      this.buttons,
    );
    this.pending();
  }

  get decided() {
    return this.el.dataset.state !== 'pending';
  }

  /** The tool call's own line says where it stands too. */
  mark(words) {
    this.tool?.setState(words);
  }

  /** Show Approve / Decline. */
  pending() {
    this.sending = false;
    this.mark('awaiting your approval');
    this.el.dataset.state = 'pending';
    this.state.textContent = 'Nothing changes until you approve.';
    const approve = el('button', {
      type: 'button',
      class: 'tool-button primary approve',
      text: 'Approve',
      'aria-label': `Approve: ${this.request.preview?.summary || this.request.name}`,
      onclick: () => this.onDecide(this, true, null),
    });
    const decline = el('button', {
      type: 'button',
      class: 'tool-button decline',
      text: 'Decline…',
      'aria-label': 'Decline this action (you may say why)',
      onclick: () => this.askReason(),
    });
    // An MCP server's tool may be let run for the rest of this chat without asking again.
    const always =
      this.request.preview?.target?.type === 'mcp'
        ? el('button', {
            type: 'button',
            class: 'tool-button always',
            text: 'Always in this chat',
            'aria-label': `Approve ${this.request.name} now and for the rest of this chat`,
            onclick: () => this.onDecide(this, true, null, true),
          })
        : null;
    this.buttons.replaceChildren(...[approve, always, decline].filter(Boolean));
  }

  /** Decline asks for an optional reason first (sent to the model with the denial). */
  askReason() {
    const box = el('input', { class: 'decline-reason', maxlength: 500, 'aria-label': 'Why not? (optional)', placeholder: 'Why not? (optional)' });
    const form = el(
      'form',
      { class: 'decline-form' },
      box,
      el('button', { type: 'submit', class: 'tool-button danger confirm-decline', text: 'Decline' }),
      el('button', { type: 'button', class: 'tool-button', text: 'Back', onclick: () => this.back() }),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.onDecide(this, false, box.value.trim() || null);
    });
    box.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape') return;
      event.preventDefault();
      event.stopPropagation();
      this.back();
    });
    this.buttons.replaceChildren(form);
    box.focus();
  }

  back() {
    this.pending();
    this.buttons.querySelector('.decline')?.focus();
  }

  /** While the decision is posted. */
  busy() {
    this.sending = true;
    for (const node of this.buttons.querySelectorAll('button, input')) node.disabled = true;
    this.state.textContent = 'Sending your decision…';
  }

  /** Show how it was decided (an approval from the API); the card is no longer actionable. */
  decide(approval, { focus = false } = {}) {
    const approved = approval.approval === 'approved';
    this.el.dataset.state = approved ? 'approved' : 'declined';
    this.mark(approved ? 'approved' : 'declined');
    this.el.closest('.turn')?.querySelector('.turn-status.awaiting_approval')?.remove();
    const reason = !approved && approval.reason ? `: ${approval.reason}` : '';
    const when = approval.decided_at ? ` (${new Date(approval.decided_at).toLocaleString()})` : '';
    this.state.textContent = approved ? `Approved${when}` : `Declined${reason}${when}`;
    this.buttons.replaceChildren();
    if (focus) this.state.focus();
  }
}

/** An MCP call has no preview: its raw input, and the server's hints (shown, not trusted). */
function remoteCall(preview) {
  if (preview.target?.type !== 'mcp') return null;
  const hints = preview.annotations ? `Server's hints (not checked): ${JSON.stringify(preview.annotations)}` : '';
  return el(
    'div',
    { class: 'approval-remote' },
    el('pre', { class: 'approval-input', text: JSON.stringify(preview.input ?? {}, null, 2) }),
    hints ? el('p', { class: 'approval-hints', text: hints }) : null,
  );
}

function changesTable(changes) {
  if (!changes.length) return null;
  return el(
    'table',
    { class: 'data-table approval-changes' },
    el('caption', { class: 'visually-hidden', text: 'What would change' }),
    el(
      'thead',
      {},
      el('tr', {}, ...['What', 'Now', 'After'].map((text) => el('th', { scope: 'col', text }))),
    ),
    el(
      'tbody',
      {},
      ...changes.map((c) =>
        el(
          'tr',
          {},
          el('th', { scope: 'row', text: String(c.field ?? '') }),
          el('td', { class: 'before', text: String(c.before ?? '—') }),
          el('td', { class: 'after', text: `→ ${c.after ?? '—'}` }),
        ),
      ),
    ),
  );
}

/**
 * The cards of the open chat. `place(turnId, toolUseId)` returns the turn view to draw a card
 * in; `onContinue(turnId, eventsUrl, afterView)` follows the turn a decision started;
 * `onStale()` redraws the chat from the server (another tab decided); `onError(err)`.
 */
export class Approvals {
  constructor({ place, onContinue, onStale, onError }) {
    Object.assign(this, { place, onContinue, onStale, onError });
    this.cards = new Map(); // tool_use_id -> card
    this.timer = 0;
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible') this.poll();
    });
  }

  clear() {
    this.cards.clear();
    clearTimeout(this.timer);
    this.timer = 0;
  }

  /** Draw (or update) the card for an approval request or a stored approval. */
  show(approval) {
    let card = this.cards.get(approval.tool_use_id);
    if (!card) {
      const view = this.place(approval.turn_id);
      if (!view) return null;
      card = new ApprovalCard(approval, (c, approved, reason, always) => this.send(c, approved, reason, always));
      this.cards.set(approval.tool_use_id, card);
      card.tool = view.showApproval(approval.tool_use_id, card.el);
      if (!card.decided) card.mark('awaiting your approval');
    }
    if (approval.approval) card.decide(approval);
    this.schedule();
    return card;
  }

  /** The stored approvals of a turn that made calls without results: pending or decided. */
  async load(turnId) {
    try {
      for (const approval of await api.turnApprovals(turnId)) this.show({ ...approval, turn_id: turnId });
    } catch {
      // A turn without approvals (a call cut off), or gone: nothing to draw.
    }
  }

  async send(card, approved, reason, always = false) {
    card.busy();
    let decided;
    try {
      const body = { tool_use_id: card.toolUseId, approved, reason };
      if (always) body.always = true;
      decided = await api.decide(card.turnId, body);
    } catch (err) {
      if (err.status === 409 || err.status === 404) this.onStale();
      else {
        card.pending();
        this.onError(err);
      }
      return;
    }
    card.decide(decided, { focus: true });
    if (decided.continuation_turn_id) {
      this.onContinue(decided.continuation_turn_id, decided.events_url, this.place(card.turnId));
    }
  }

  get waiting() {
    return [...this.cards.values()].filter((c) => !c.decided && !c.sending);
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = this.waiting.length ? setTimeout(() => this.poll(), PAGE_POLL_MS) : 0;
  }

  /** Ask the server about each waiting card: another tab (or a new message) may have decided. */
  async poll() {
    const turns = new Set(this.waiting.map((c) => c.turnId));
    if (!turns.size) return;
    let changed = false;
    for (const turnId of turns) {
      try {
        for (const approval of await api.turnApprovals(turnId)) {
          const card = this.cards.get(approval.tool_use_id);
          if (card && !card.decided && approval.approval) {
            card.decide(approval);
            changed = true;
          }
        }
      } catch {
        // Try again at the next poll.
      }
    }
    if (changed) this.onStale();
    else this.schedule();
  }
}
