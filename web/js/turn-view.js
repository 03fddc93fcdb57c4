// Renders one turn from the server's events (each event's effect is in turn-events.js), keyed by
// message and block ids, so a message that is discarded, or re-sent with the same id, replaces
// what was shown instead of adding.

import { el } from './dom.js';
import { HANDLERS } from './turn-events.js';
import { chartSpecs, chartView } from './chart.js';
import { ToolFold } from './tool-fold.js';
import { parse } from './tool-view.js';
import { DEMO_MODEL } from './words.js';

export class TurnView {
  /**
   * `userText`: the question (null if unknown); `onChange()` runs after each repaint;
   * `onCopy(button, getText)` copies for the answer's copy button; `onApproval(type, data)`
   * gets the approval events.
   */
  constructor({
    userText = null,
    turnId = null,
    onChange = () => {},
    onCopy = () => {},
    onApproval = () => {},
  } = {}) {
    this.onChange = onChange;
    this.onCopy = onCopy;
    this.onApproval = onApproval; // (type, data) for approval_requested and approval_resolved
    this.messages = new Map(); // message_id -> { el, blockIds }
    this.blocks = new Map(); // block_id -> block view
    this.tools = new Map(); // tool_use_id -> tool block view
    this.results = new Map(); // tool_use_id -> { data, orphan? }
    this.fold = null; // the answer's tool calls, folded into one line
    this.dirty = new Set();
    this.frame = 0;
    this.modelTag = el('span', { class: 'model-tag', hidden: true });
    this.activity = el('div', { class: 'activity', text: 'Waiting for the model…' });
    this.body = el('div', { class: 'assistant' });
    this.footer = el('div', { class: 'turn-footer' });
    // Per-message actions: copy, and edit, regenerate and versions (branches.js).
    this.userActions = el('div', { class: 'user-actions' });
    this.actions = el('div', { class: 'turn-actions', role: 'group', 'aria-label': 'Answer actions' });
    this.notices = new Map(); // stop reason or error code -> the notice shown for it
    this.announce = null; // set for a live turn: reads finished text to screen readers
    this.userText = userText;
    this.el = el(
      'article',
      { class: 'turn', dataset: { state: 'running' }, 'aria-label': userText ? 'Question and answer' : 'Answer' },
      userText === null
        ? null
        : el('div', { class: 'msg user' }, el('div', { class: 'bubble', text: userText }), this.userActions),
      el('div', { class: 'assistant-head' }, this.modelTag),
      this.body,
      this.activity,
      this.footer,
      this.actions,
    );
    if (turnId) this.el.dataset.turnId = turnId;
  }

  /** The answer's text as the model wrote it (markdown), every text block in order. */
  answerText() {
    const parts = [];
    let run = null;
    for (const message of this.messages.values()) {
      for (const id of message.blockIds) {
        const view = this.blocks.get(id);
        if (!view?.source) continue;
        // Blocks of one run are one text, split by the API where citations start and stop.
        if (view.run && view.run === run) parts[parts.length - 1] += view.source;
        else parts.push(view.source);
        run = view.run;
      }
    }
    return parts.join('\n\n');
  }

  /** Add a button to the answer's actions (after the turn ends, they show). */
  addAction(button) {
    this.actions.append(button);
    return button;
  }

  /** Show a message sent while another turn runs as waiting; `onCancel()` for its × button. */
  markQueued(onCancel) {
    this.el.dataset.queued = 'true';
    this.activity.textContent = '';
    this.userActions.append(
      el('span', { class: 'queued-tag', text: 'Queued' }),
      el('button', {
        type: 'button',
        class: 'copy cancel-queued',
        'aria-label': 'Cancel this queued message',
        text: '×',
        onclick: onCancel,
      }),
    );
  }

  /** The queued message's turn started: it is an ordinary running turn now. */
  unqueue() {
    if (!this.el.dataset.queued) return;
    delete this.el.dataset.queued;
    for (const node of this.userActions.querySelectorAll('.queued-tag, .cancel-queued')) node.remove();
    this.activity.textContent = 'Waiting for the model…';
  }

  /** Put an approval card under the tool call it is about (or at the end); return that call. */
  showApproval(toolUseId, card) {
    const tool = this.tools.get(toolUseId);
    this.foldAfter(tool ? this.messages.get(tool.messageId) : null).approvals.append(card);
    this.onChange();
    return tool || null;
  }

  /** The answer's tool fold, made after `message`'s element (or at the end) the first time. */
  foldAfter(message) {
    if (this.fold?.el.isConnected) return this.fold;
    this.fold = new ToolFold();
    if (message?.el.isConnected) message.el.after(this.fold.el);
    else this.body.append(this.fold.el);
    return this.fold;
  }

  /** Draw the charts a tool result carries, under the fold's line. */
  showCharts(data, message) {
    if (data.is_error || data.declined) return;
    const specs = chartSpecs(parse(data.content));
    if (specs.length) this.foldAfter(message).showCharts(data.tool_use_id, specs.map(chartView));
  }

  /** Put a tool call's view in the fold; its state changes redraw the fold's line. */
  addTool(view, message) {
    const fold = this.foldAfter(message);
    view.onState = () => fold.refresh();
    fold.add(view);
  }

  /** Say something once for this turn: a second notice for the same cause replaces the first. */
  notice(key, node, parent) {
    this.notices.get(key)?.remove();
    this.notices.set(key, node);
    parent.append(node);
  }

  /** Apply one event; unknown types are ignored. */
  handle(type, data) {
    const handler = HANDLERS[type];
    if (!handler) return;
    handler.call(this, data);
    this.onChange();
  }

  /** Show an error that happened outside the event stream (e.g. starting the turn). */
  fail(code, message) {
    this.handle('turn_error', { code, message });
    this.handle('turn_end', { status: 'failed' });
  }

  /** Mark a turn drawn from storage as done, without words about how it ended. */
  settle() {
    this.flush();
    this.activity.textContent = '';
    this.el.dataset.state = 'ended';
    this.ended();
  }

  /** Runs once the turn is over, live or drawn from storage. */
  ended() {
    if (this.actions.querySelector('.copy-answer') || !this.answerText()) return;
    this.addAction(
      el('button', {
        type: 'button',
        class: 'copy copy-answer',
        'aria-label': 'Copy the answer',
        text: 'Copy',
        onclick: (event) => this.onCopy(event.currentTarget, () => this.answerText()),
      }),
    );
  }

  /** Show how a stored turn ended, from GET /api/turns/<id>. */
  outcome(turn) {
    if (this.el.dataset.status || turn.status === 'running') return;
    if (turn.error) this.handle('turn_error', turn.error);
    this.handle('turn_end', { turn_id: turn.id, status: turn.status });
  }

  get turnId() {
    return this.el.dataset.turnId || null;
  }

  get running() {
    return this.el.dataset.state === 'running';
  }

  schedule(view) {
    this.dirty.add(view);
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  }

  /** Paint every text block that changed since the last frame. */
  flush() {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    for (const view of this.dirty) view.render();
    this.dirty.clear();
    this.onChange();
  }

  clear() {
    this.body.replaceChildren();
    this.footer.replaceChildren();
    for (const map of [this.messages, this.blocks, this.tools, this.results, this.notices]) map.clear();
    this.fold = null;
    this.dirty.clear();
  }

  forget(messageId) {
    const message = this.messages.get(messageId);
    if (!message) return;
    for (const blockId of message.blockIds) {
      this.dirty.delete(this.blocks.get(blockId));
      this.blocks.delete(blockId);
    }
    for (const [id, view] of this.tools) if (view.messageId === messageId) this.tools.delete(id);
    if (this.fold?.drop((view) => view.messageId !== messageId)) {
      this.fold.el.remove();
      this.fold = null;
    }
    this.messages.delete(messageId);
  }

  message(id, model) {
    const view = {
      el: el('div', { class: 'msg assistant', dataset: { messageId: id } }),
      blockIds: [],
    };
    const old = this.messages.get(id);
    this.forget(id);
    if (old) old.el.replaceWith(view.el);
    else this.body.append(view.el);
    this.messages.set(id, view);
    if (model) {
      // The demo is labelled once, by the page's banner; another model is named on its answer.
      this.modelTag.hidden = model === DEMO_MODEL;
      this.modelTag.textContent = model;
    }
    return view;
  }
}
