// Views of one content block each: text (markdown), thinking, tool calls, anything else.

import { el, prettyJson } from './dom.js';
import { renderMarkdown } from './markdown.js';
import { resultView } from './tool-view.js';

const TOOL_TYPES = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);

/** Return the view for a `block_start`; `schedule(view)` asks for a text repaint. */
export function createBlock(data, schedule) {
  const block = data.block || { type: data.type };
  if (data.type === 'text') return new TextBlock(block, schedule);
  if (data.type === 'thinking') return new ThinkingBlock(block.thinking || '', false);
  if (data.type === 'redacted_thinking') return new ThinkingBlock('', true);
  if (TOOL_TYPES.has(data.type)) return new ToolBlock(block);
  if (data.type === 'compaction') return new CompactionBlock();
  return new OtherBlock(data.type, block);
}

function cutOff(view, words = 'Cut off here.') {
  view.el.classList.add('incomplete');
  view.el.append(el('p', { class: 'cut-off', text: words }));
}

class TextBlock {
  constructor(block, schedule) {
    this.source = block.text || '';
    this.schedule = schedule;
    this.body = el('div', { class: 'markdown' });
    this.el = el('div', { class: 'block text' }, this.body);
    this.render();
  }

  delta(delta) {
    if (delta.type !== 'text_delta') return;
    this.source += delta.text;
    this.schedule(this);
  }

  // The whole block is re-rendered, batched to one paint per frame by the turn view.
  render() {
    this.body.replaceChildren(renderMarkdown(this.source));
  }

  end(data) {
    this.render();
    if (data.incomplete) cutOff(this);
  }
}

class ThinkingBlock {
  constructor(text, redacted) {
    this.text = document.createTextNode(text);
    this.summary = el('summary', { text: redacted ? 'Thinking (redacted)' : 'Thinking…' });
    this.redacted = redacted;
    const body = redacted
      ? el('p', { class: 'muted', text: 'The model’s reasoning here is encrypted.' })
      : el('div', { class: 'thinking-text' }, this.text);
    this.el = el('details', { class: 'block thinking' }, this.summary, body);
  }

  delta(delta) {
    if (delta.type === 'thinking_delta') this.text.appendData(delta.thinking);
  }

  end(data) {
    if (!this.redacted) this.summary.textContent = 'Thinking';
    if (data.incomplete) cutOff(this);
  }
}

class ToolBlock {
  constructor(block) {
    this.input = document.createTextNode(
      block.input && Object.keys(block.input).length ? prettyJson(block.input) : '',
    );
    this.state = el('span', { class: 'tool-state', text: 'writing input…' });
    this.slot = el('div', { class: 'tool-result-slot' });
    this.el = el(
      'div',
      { class: 'block tool', dataset: { toolUseId: block.id || '' } },
      el(
        'div',
        { class: 'tool-head' },
        el('span', { class: 'tool-label', text: 'Tool' }),
        el('span', { class: 'tool-name', text: block.name || block.type }),
        this.state,
      ),
      el('pre', { class: 'tool-input' }, this.input),
      this.slot,
    );
  }

  delta(delta) {
    if (delta.type === 'input_json_delta') this.input.appendData(delta.partial_json);
  }

  end(data) {
    // Unusable input ends as {}: keep showing what streamed, which is what went wrong.
    const unusable = data.error || data.incomplete;
    if (data.input !== undefined && !(unusable && this.input.data)) {
      this.input.data = prettyJson(data.input);
    }
    if (data.incomplete) {
      this.state.textContent = 'cut off, not run';
      cutOff(this, 'The input was cut off, so the tool did not run.');
    } else if (data.error) {
      this.state.textContent = 'invalid input';
    } else if (!this.slot.firstChild) {
      this.state.textContent = 'running…';
    }
  }

  showResult(data) {
    this.state.textContent = data.is_error ? 'failed' : 'done';
    this.el.classList.toggle('failed', Boolean(data.is_error));
    this.slot.replaceChildren(resultView(data));
  }

  clearResult() {
    this.slot.replaceChildren();
    this.state.textContent = 'running…';
    this.el.classList.remove('failed');
  }
}

// The model's summary of the conversation before it (CONTEXT_STRATEGY=compact): a quiet
// divider, never answer text; the summary itself is for the model.
class CompactionBlock {
  constructor() {
    this.el = el('div', { class: 'block compaction', role: 'separator' },
      el('span', { text: 'Earlier messages summarised for the model' }));
  }

  delta() {}

  end() {}
}

class OtherBlock {
  constructor(type, block) {
    this.body = document.createTextNode(prettyJson(block));
    this.el = el(
      'details',
      { class: 'block other' },
      el('summary', { text: `${type} block` }),
      el('pre', {}, this.body),
    );
  }

  delta(delta) {
    const piece = delta.partial_json ?? delta.text ?? '';
    if (typeof piece === 'string' && piece) this.body.appendData(piece);
  }

  end(data) {
    if (data.incomplete) cutOff(this);
  }
}
