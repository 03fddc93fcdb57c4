// Follows one turn's events with an EventSource: the replay, then live events; after a
// dropped connection the browser reconnects with Last-Event-ID by itself, and when it gives
// up (an expired token, a server error) we reopen from the last event seen with a fresh URL.

import { api } from './rest.js';
// The server's own list of event types (streaming/wire/protocol.py), served as a module.
import { EVENT_TYPES } from './protocol.js';
const MAX_BACKOFF_MS = 8000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function resumeUrl(url, after) {
  const target = new URL(url, location.href);
  if (after > 0) target.searchParams.set('last_event_id', String(after));
  else target.searchParams.delete('last_event_id');
  return target.toString();
}

export class Follower {
  /**
   * `onEvent(type, data)` gets each event once, in order; `onState('live'|'reconnecting')`;
   * `onEnd(data)` after `turn_end`; `onGone(turn)` when the turn ended but its stream has
   * nothing more to give, so the caller should redraw it from storage.
   */
  constructor({ turnId, eventsUrl, onEvent, onState = () => {}, onEnd = () => {}, onGone = () => {} }) {
    Object.assign(this, { turnId, eventsUrl, onEvent, onState, onEnd, onGone });
    this.seq = 0;
    this.failures = 0;
    this.closed = false;
    this.source = null;
  }

  start() {
    this.open(this.eventsUrl);
    return this;
  }

  close() {
    this.closed = true;
    if (this.source) this.source.close();
  }

  open(url) {
    const source = new EventSource(resumeUrl(url, this.seq));
    this.source = source;
    for (const type of EVENT_TYPES) source.addEventListener(type, (event) => this.receive(type, event));
    source.addEventListener('open', () => {
      this.failures = 0;
      this.onState('live');
    });
    source.addEventListener('error', () => {
      if (this.closed || source !== this.source) return;
      if (source.readyState === EventSource.CLOSED) this.recover();
      else this.onState('reconnecting');
    });
  }

  receive(type, event) {
    if (this.closed) return;
    const seq = Number(event.lastEventId);
    // Ids only grow within a turn (a `reset` continues the numbering): never apply one twice.
    if (seq > 0 && seq <= this.seq) return;
    if (seq > 0) this.seq = seq;
    let data;
    try {
      data = JSON.parse(event.data);
    } catch {
      return;
    }
    this.onEvent(type, data);
    if (type === 'turn_end') {
      this.close();
      this.onEnd(data);
    }
  }

  async recover() {
    this.source.close();
    this.onState('reconnecting');
    await sleep(Math.min(MAX_BACKOFF_MS, 500 * 2 ** this.failures));
    this.failures += 1;
    if (this.closed) return;
    let turn;
    try {
      turn = await api.getTurn(this.turnId);
    } catch (err) {
      if (err.status === 404) {
        this.close();
        this.onGone(null);
      } else if (!this.closed) {
        this.recover();
      }
      return;
    }
    if (this.closed) return;
    if (turn.status !== 'running' && this.failures > 2) {
      this.close();
      this.onGone(turn);
      return;
    }
    this.open(turn.events_url);
  }
}
