// One open chat: draws its stored turns, follows the running one, sends and stops turns,
// and says in the status line what is happening. The server owns every message.

import { api } from './api.js';
import { Follower } from './follow.js';
import { storedTurns } from './history.js';
import { TurnView } from './turn-view.js';
import { DEMO_MODEL } from './words.js';

const SESSION_KEY = 'chat.session';
const MODEL_KEY = 'chat.model';

export class Conversation {
  /**
   * `ui`: the page's elements. `onCreated(session)` when sending starts a new chat,
   * `onMissing(id)` when an opened chat no longer exists, `onError(err)` for anything else,
   * `onCopy(button, getText)` for copy buttons, `onChange()` when the open chat changes.
   */
  constructor(ui, { onCreated, onMissing, onError, onCopy, onChange = () => {} }) {
    Object.assign(this, { ui, onCreated, onMissing, onError, onCopy, onChange });
    this.sessionId = null;
    this.view = null; // the turn being followed
    this.turnId = null;
    this.follower = null;
    this.busy = false;
    this.connection = 'live';
    this.stopping = false;
    this.model = localStorage.getItem(MODEL_KEY);
    this.loads = 0;
    this.pinned = true;
    ui.scroller.addEventListener('scroll', () => {
      const { scrollTop, scrollHeight, clientHeight } = ui.scroller;
      this.pinned = scrollHeight - scrollTop - clientHeight < 80;
    });
  }

  /** The chat the page showed last, if any. */
  static saved() {
    return localStorage.getItem(SESSION_KEY);
  }

  renderStatus() {
    const { ui } = this;
    const demo = this.model === DEMO_MODEL;
    ui.demo.hidden = !demo;
    ui.send.disabled = this.busy;
    ui.stop.hidden = !this.turnId;
    ui.stop.disabled = this.stopping;
    let words = '';
    if (this.turnId && this.connection === 'reconnecting') words = 'Connection lost — reconnecting…';
    else if (this.stopping) words = 'Stopping…';
    else if (this.turnId) words = demo ? 'The offline demo model is answering…' : 'Claude is answering…';
    ui.status.textContent = words;
    ui.status.classList.toggle('demo', demo && Boolean(this.turnId));
    this.onChange();
  }

  noteModel(model) {
    if (!model) return;
    this.model = model;
    localStorage.setItem(MODEL_KEY, model);
    this.renderStatus();
  }

  followScroll() {
    if (this.pinned) this.ui.scroller.scrollTop = this.ui.scroller.scrollHeight;
  }

  get running() {
    return Boolean(this.turnId);
  }

  /** Show the chat's title (the top bar and the document's). */
  setTitle(title) {
    this.ui.title.textContent = title || 'Untitled chat';
    this.ui.title.title = this.ui.title.textContent;
    document.title = this.sessionId ? `${this.ui.title.textContent} · Finance chat` : 'Finance chat';
  }

  /** Read `text` to screen readers through the polite live region. */
  say(text) {
    if (text) this.ui.live.textContent = text;
  }

  newView(props) {
    const view = new TurnView({ ...props, onChange: () => this.followScroll(), onCopy: this.onCopy });
    this.ui.turns.append(view.el);
    this.ui.empty.hidden = true;
    return view;
  }

  /** Stop following (the turn runs on at the server) and forget the chat's live state. */
  detach() {
    if (this.follower) this.follower.close();
    Object.assign(this, { follower: null, view: null, turnId: null, busy: false, stopping: false });
    this.renderStatus();
  }

  /** Show an empty new chat; the session is created with the first message. */
  clear() {
    this.detach();
    this.loads += 1;
    this.sessionId = null;
    localStorage.removeItem(SESSION_KEY);
    this.ui.turns.replaceChildren();
    this.ui.title.textContent = 'New chat';
    this.ui.title.title = '';
    document.title = 'Finance chat';
    this.ui.empty.hidden = false;
    this.onChange();
  }

  /** Draw a chat from storage and re-attach to its running turn, if it has one. */
  async open(id) {
    this.detach();
    this.sessionId = id;
    localStorage.setItem(SESSION_KEY, id);
    const load = ++this.loads;
    let session;
    try {
      session = await api.getSession(id);
    } catch (err) {
      if (load !== this.loads) return;
      if (err.status === 404) this.onMissing(id);
      else this.onError(err);
      return;
    }
    if (load !== this.loads) return; // another chat was opened meanwhile
    this.ui.turns.replaceChildren();
    this.ui.empty.hidden = true;
    this.setTitle(session.title);
    this.onChange();
    const running = session.running_turn_id;
    let last = null;
    let live = null;
    for (const turn of storedTurns(session.messages)) {
      const view = this.newView({ userText: turn.userText, turnId: turn.turnId });
      if (turn.turnId && turn.turnId === running) {
        live = view; // drawn from its events: replayed from the start, then followed
        continue;
      }
      for (const [type, data] of turn.events) view.handle(type, data);
      view.settle();
      last = view;
    }
    this.noteModel(session.messages.findLast((m) => m.role === 'assistant' && m.model)?.model);
    this.pinned = true;
    if (running) {
      this.attach(running, live || this.newView({ turnId: running }));
    } else if (last && last.turnId) {
      const shown = last;
      api.getTurn(shown.turnId).then((t) => load === this.loads && shown.outcome(t), () => {});
    }
    this.followScroll();
  }

  async attach(turnId, view, eventsUrl) {
    Object.assign(this, { view, turnId, busy: true, connection: 'live', stopping: false });
    view.announce = (text) => this.say(text);
    this.renderStatus();
    let url = eventsUrl;
    if (!url) {
      try {
        url = (await api.getTurn(turnId)).events_url;
      } catch (err) {
        if (this.view === view) this.detach();
        view.fail(err.code, err.message);
        return;
      }
    }
    if (this.view !== view) return;
    this.follower = new Follower({
      turnId,
      eventsUrl: url,
      onEvent: (type, data) => {
        view.handle(type, data);
        if (type === 'message_start') this.noteModel(data.model);
      },
      onState: (connection) => {
        this.connection = connection;
        this.renderStatus();
      },
      onEnd: () => {
        if (this.view === view) this.detach();
        this.ui.input.focus();
      },
      onGone: () => {
        if (this.view === view) this.open(this.sessionId);
      },
    }).start();
  }

  /** Send a question: a new chat gets its session first, titled by the question. */
  async send(text) {
    if (this.busy || !text.trim()) return;
    this.busy = true;
    this.renderStatus();
    if (!this.sessionId) {
      try {
        const session = await api.createSession(text.trim().slice(0, 80));
        this.sessionId = session.id;
        localStorage.setItem(SESSION_KEY, session.id);
        this.setTitle(session.title);
        this.onCreated(session);
      } catch (err) {
        this.busy = false;
        this.renderStatus();
        this.onError(err);
        return;
      }
    }
    this.ui.input.value = '';
    const view = this.newView({ userText: text });
    this.pinned = true;
    this.followScroll();
    try {
      const turn = await api.startTurn(this.sessionId, text);
      await this.attach(turn.turn_id, view, turn.events_url);
    } catch (err) {
      view.fail(err.code, err.message);
      this.ui.input.value = text;
      this.busy = false;
      this.renderStatus();
      if (err.status === 401) this.onError(err);
    }
  }

  /** Ask the server to cancel the running turn; its `turn_end` says when it stopped. */
  async stop() {
    if (!this.turnId) return;
    this.stopping = true;
    this.renderStatus();
    try {
      await api.cancelTurn(this.turnId);
    } catch (err) {
      this.stopping = false;
      this.renderStatus();
      this.onError(err);
    }
  }
}
