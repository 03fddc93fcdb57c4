// Views of one content block each: text (markdown, cited figures), thinking, tool calls, anything else.

import { el, prettyJson } from './dom.js';
import { renderRun } from './cited.js';
import { toolWords } from './tool-fold.js';
import { resultView } from './tool-view.js';

const TOOL_TYPES = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);

/**
 * Return the view for a `block_start`; `schedule(view)` asks for a text repaint. `near`:
 * `{ replaces, after }`, the block this one replaces (same id) or the message's block before it.
 */
export function createBlock(data, schedule, near = {}) {
  const block = data.block || { type: data.type };
  if (data.type === 'text') return new TextBlock(block, schedule, near);
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

/**
 * Text blocks the API split a message's text into, rendered as one markdown source: a block
 * joins the run of the text block before it when either is cited (citations split text mid-
 * sentence); uncited blocks side by side stay apart, as the model's separate paragraphs.
 */
class TextRun {
  constructor(schedule) {
    this.blocks = [];
    this.body = el('div', { class: 'markdown' });
    this.said = 0; // how much of the run's text was read to screen readers
    this.schedule = schedule;
  }

  render() {
    this.body.replaceChildren(renderRun(this.blocks));
  }

  /** The text shown since the last call (for the live region). */
  unsaid() {
    const text = this.body.innerText;
    const fresh = text.slice(this.said).trim();
    this.said = text.length;
    return fresh;
  }
}

class TextBlock {
  constructor(block, schedule, { replaces = null, after = null } = {}) {
    this.source = block.text || '';
    this.citations = [...(block.citations || [])];
    this.after = after?.run ? after : null;
    this.el = el('div', { class: 'block text' });
    if (replaces?.run) {
      this.run = replaces.run;
      this.run.blocks[this.run.blocks.indexOf(replaces)] = this;
      this.lead(this.run.blocks[0] === this);
    } else if (this.after && (this.after.cited || this.cited)) {
      this.join();
    } else {
      this.run = new TextRun(schedule);
      this.run.blocks.push(this);
      this.lead(true);
    }
    this.render();
  }

  get cited() {
    return this.citations.length > 0;
  }

  /** Show the run's text in this block's element, or nothing (another block shows it). */
  lead(yes) {
    this.el.classList.toggle('joined', !yes);
    this.el.replaceChildren(...(yes ? [this.run.body] : []));
  }

  /** Move into the run of the text block before this one. */
  join() {
    this.run = this.after.run;
    this.run.blocks.push(this);
    this.lead(false);
  }

  delta(delta) {
    if (delta.type === 'citations_delta' && delta.citation) {
      this.citations.push(delta.citation);
      if (this.after && this.run !== this.after.run) this.join();
    } else if (delta.type === 'text_delta') {
      this.source += delta.text;
    } else {
      return;
    }
    this.run.schedule(this.run);
  }

  // The whole run is re-rendered, batched to one paint per frame by the turn view.
  render() {
    this.run.render();
  }

  end(data) {
    if (Array.isArray(data.citations)) {
      this.citations = [...data.citations];
      if (this.cited && this.after && this.run !== this.after.run) this.join();
    }
    this.render();
    if (data.incomplete) cutOff(this.run.blocks[0]);
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
    // Thinking the API returned without its text (display "omitted") has nothing to show.
    if (!this.redacted && !this.text.data && !data.incomplete) this.el.hidden = true;
    if (data.incomplete) cutOff(this);
  }
}

class ToolBlock {
  constructor(block) {
    this.name = block.name || block.type;
    this.running = true;
    this.failed = false;
    this.onState = () => {};
    const words = toolWords(this.name);
    this.input = document.createTextNode(
      block.input && Object.keys(block.input).length ? prettyJson(block.input) : '',
    );
    this.inputView = el('p', { class: 'tool-args' });
    this.state = el('span', { class: 'tool-state', text: 'writing input…' });
    this.slot = el('div', { class: 'tool-result-slot' });
    this.el = el(
      'div',
      { class: 'block tool', dataset: { toolUseId: block.id || '', tool: this.name } },
      el(
        'div',
        { class: 'tool-head' },
        el('span', { class: 'tool-title', text: words.title }),
        this.state,
      ),
      this.inputView,
      el('details', { class: 'tool-raw-input' }, el('summary', { text: 'Input as sent' }),
        el('pre', { class: 'tool-input' }, this.input)),
      this.slot,
    );
    if (block.input) this.showArgs(block.input);
  }

  /** The call's input as "Label: value" pairs, in the call's order. */
  showArgs(input) {
    const pairs = input && typeof input === 'object' ? Object.entries(input) : [];
    this.inputView.replaceChildren(
      ...pairs.map(([key, value]) =>
        el('span', { class: 'tool-arg' }, el('span', { class: 'arg-key', text: `${label(key)}: ` }), argText(value)),
      ),
    );
  }

  setState(words, { running = false, failed = false } = {}) {
    this.state.textContent = words;
    this.running = running;
    this.failed = failed;
    this.el.classList.toggle('failed', failed);
    this.onState();
  }

  delta(delta) {
    if (delta.type === 'input_json_delta') this.input.appendData(delta.partial_json);
  }

  end(data) {
    // Unusable input ends as {}: keep showing what streamed, which is what went wrong.
    const unusable = data.error || data.incomplete;
    if (data.input !== undefined && !(unusable && this.input.data)) {
      this.input.data = prettyJson(data.input);
      this.showArgs(data.input);
    }
    if (data.incomplete) {
      this.setState('cut off, not run', { failed: true });
      cutOff(this, 'The input was cut off, so the tool did not run.');
    } else if (data.error) {
      this.setState('invalid input', { failed: true });
    } else if (!this.slot.firstChild) {
      this.setState('running…', { running: true });
    }
  }

  showResult(data) {
    const failed = Boolean(data.is_error) && !data.declined;
    this.setState(data.declined ? 'declined' : data.is_error ? 'failed' : 'done', { failed });
    this.slot.replaceChildren(resultView(data));
  }

  clearResult() {
    this.slot.replaceChildren();
    this.setState('running…', { running: true });
  }
}

function label(key) {
  const words = String(key).replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function argText(value) {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
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
