// How each event of a turn's stream changes its TurnView: one handler per event type, called
// with the view as `this`. A type not listed here is ignored (see TurnView.handle).

import { createBlock } from './blocks.js';
import { el } from './dom.js';
import { toolWords } from './tool-fold.js';
import { resultView } from './tool-view.js';
import { contextText, errorText, statusText, stopReasonText } from './words.js';

export const HANDLERS = {
  turn_start(data) {
    this.unqueue();
    this.el.dataset.turnId = data.turn_id;
    if (data.reset) this.clear();
  },
  message_start(data) {
    this.activity.textContent = '';
    this.message(data.message_id, data.model);
  },
  block_start(data) {
    const message = this.messages.get(data.message_id) || this.message(data.message_id);
    const old = this.blocks.get(data.block_id);
    const after = old ? null : this.blocks.get(message.blockIds.at(-1));
    const view = createBlock(data, (v) => this.schedule(v), { replaces: old, after });
    view.messageId = data.message_id;
    if (old) {
      this.dirty.delete(old);
      old.el.replaceWith(view.el);
      if (view.showResult) this.fold?.replace(old, view);
    } else {
      if (view.showResult) this.addTool(view, message);
      else message.el.append(view.el);
      message.blockIds.push(data.block_id);
    }
    this.blocks.set(data.block_id, view);
    const toolId = data.block && data.block.id;
    if (toolId && view.showResult) {
      this.tools.set(toolId, view);
      const known = this.results.get(toolId);
      if (known) {
        if (known.orphan) known.orphan.remove();
        this.results.set(toolId, { data: known.data });
        view.showResult(known.data);
      }
    }
  },
  block_delta(data) {
    this.blocks.get(data.block_id)?.delta(data.delta || {});
  },
  block_end(data) {
    const view = this.blocks.get(data.block_id);
    if (!view) return;
    this.dirty.delete(view);
    if (view.run) this.dirty.delete(view.run);
    view.end(data);
  },
  progress(data) {
    // A note between tool calls is a status line under the fold, not a hidden thinking block.
    const view = this.blocks.get(data.block_id);
    if (view?.el) view.el.hidden = true;
    this.foldAfter(this.messages.get(data.message_id)).progress(data.text);
  },
  message_end(data) {
    const words = stopReasonText(data.stop_reason);
    const message = this.messages.get(data.message_id);
    // Read the message's text once it is whole: cited blocks split it mid-sentence.
    if (this.announce && message) {
      const runs = new Set(message.blockIds.map((id) => this.blocks.get(id)?.run).filter(Boolean));
      const text = [...runs].map((run) => run.unsaid()).filter(Boolean).join('\n');
      if (text) this.announce(text);
    }
    if (words && message) this.notice(data.stop_reason, el('p', { class: 'notice', text: words }), message.el);
  },
  message_discarded(data) {
    const message = this.messages.get(data.message_id);
    if (message) message.el.remove();
    this.forget(data.message_id);
    for (const [toolId, known] of this.results) {
      if (known.data.message_id !== data.message_id) continue;
      this.results.delete(toolId);
      if (known.orphan) known.orphan.remove();
      this.fold?.dropCharts(toolId);
      this.tools.get(toolId)?.clearResult();
    }
    if (this.running) this.activity.textContent = 'The model’s reply broke off; trying again…';
  },
  context_trimmed(data) {
    const words = contextText(data);
    if (words) this.body.append(el('p', { class: 'notice context-note', text: words }));
  },
  tool_result(data) {
    const tool = this.tools.get(data.tool_use_id);
    this.results.get(data.tool_use_id)?.orphan?.remove();
    if (tool) {
      tool.showResult(data);
      this.results.set(data.tool_use_id, { data });
      this.showCharts(data, this.messages.get(tool.messageId));
      return;
    }
    const orphan = el(
      'div',
      { class: 'block tool', dataset: { tool: data.name || 'tool' } },
      el('div', { class: 'tool-head' }, el('span', { class: 'tool-title', text: toolWords(data.name).title })),
      resultView(data),
    );
    this.foldAfter(null).list.append(orphan);
    this.results.set(data.tool_use_id, { data, orphan });
    this.showCharts(data, null);
  },
  approval_requested(data) {
    this.onApproval('approval_requested', data);
  },
  approval_resolved(data) {
    this.onApproval('approval_resolved', data);
  },
  turn_error(data) {
    const words = errorText(data.code, data.message);
    this.notice(
      data.code,
      el(
        'div',
        { class: 'turn-error', role: 'alert' },
        el('strong', { text: words }),
        data.message && data.message !== words ? el('span', { class: 'detail', text: data.message }) : null,
      ),
      this.footer,
    );
    if (this.announce) this.announce(words);
  },
  turn_end(data) {
    this.flush();
    this.activity.textContent = '';
    this.el.dataset.state = 'ended';
    this.el.dataset.status = data.status;
    // One notice per cause: a stop says so once (not also on each block it cut), and a
    // failure its error explains needs no second "failed".
    if (data.status === 'cancelled') for (const note of this.el.querySelectorAll('.cut-off')) note.remove();
    const explained = data.status === 'failed' && this.footer.querySelector('.turn-error');
    const words = explained ? null : statusText(data.status);
    if (words) this.footer.append(el('p', { class: `turn-status ${data.status}`, text: words }));
    if (words && this.announce) this.announce(words);
    this.ended();
  },
};
