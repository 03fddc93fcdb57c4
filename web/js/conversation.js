// One open chat: draws its stored turns and holds its state (the turns shown, the one followed,
// the queue, the approval cards), and says in the status line what is happening. Following the
// running turn is in live.js, sending in sending.js, the queue in queue.js, edit, regenerate and
// versions in branches.js. The server owns every message.

import { api } from './rest.js';
import { Approvals } from './approvals.js';
import { decorate, showBranch } from './branches.js';
import { storedTurns, withEarlier } from './history.js';
import { advance, attach, detach, follow, stop } from './live.js';
import { enqueue } from './queue.js';
import { send } from './sending.js';
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
    this.busy = false; // a message is being sent
    this.unsent = null; // { sessionId, text, id, view }: the last message sent (sending.js)
    this.views = []; // every turn shown, in order
    this.queue = []; // { turnId, view, eventsUrl } sent while a turn ran, oldest first
    this.acts = {
      edit: (view, question, text) => this.send(text, { message: text, parent_id: question.parent_id }, view),
      regenerate: (view, answerId) => {
        // An answer that went on after an approval regenerates from its question's turn.
        const asked = this.views.slice(0, this.views.indexOf(view) + 1).findLast((v) => v.userText !== null);
        if (asked) this.send(asked.userText, { regenerate: answerId }, asked);
      },
      show: (messageId) => showBranch(this, messageId),
    };
    this.approvals = new Approvals({
      place: (turnId) => this.views.find((v) => v.turnId === turnId) || null,
      onContinue: (turnId, url, after) => follow(this, turnId, url, after),
      onStale: () => this.running || this.open(this.sessionId, null, true),
      onError: (err) => this.onError(err),
    });
    this.connection = 'live';
    this.stopping = false;
    this.model = localStorage.getItem(MODEL_KEY);
    this.loads = 0;
    this.pinned = true;
    this.shown = null; // the session as last drawn: its messages and `earlier_cursor`
    this.loadingEarlier = false;
    ui.scroller.addEventListener('scroll', () => {
      const { scrollTop, scrollHeight, clientHeight } = ui.scroller;
      this.pinned = scrollHeight - scrollTop - clientHeight < 80;
      if (scrollTop < 80) this.loadEarlier();
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
    // Branch controls change the active branch: not while a turn runs or waits to.
    const idle = !this.turnId && !this.queue.length && !this.busy;
    for (const button of ui.turns.querySelectorAll('.needs-idle')) {
      button.disabled = !idle || button.dataset.edge === 'true';
    }
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

  newView(props, after = null) {
    const view = new TurnView({
      ...props,
      onChange: () => this.followScroll(),
      onCopy: this.onCopy,
      onApproval: (type, data) => this.approvalEvent(type, data),
    });
    if (after && this.views.includes(after)) {
      after.el.after(view.el);
      this.views.splice(this.views.indexOf(after) + 1, 0, view);
    } else {
      this.ui.turns.append(view.el);
      this.views.push(view);
    }
    this.ui.empty.hidden = true;
    return view;
  }

  /** Remove `view` and every turn after it (an edit or regenerate replaces them). */
  dropFrom(view) {
    const at = this.views.indexOf(view);
    if (at < 0) return;
    for (const gone of this.views.splice(at)) gone.el.remove();
  }

  /** Remove one turn shown (a send that failed, being sent again). */
  dropView(view) {
    const at = this.views.indexOf(view);
    if (at >= 0) this.views.splice(at, 1)[0].el.remove();
  }

  approvalEvent(type, data) {
    if (type === 'approval_requested') {
      this.approvals.show(data);
      this.say('The assistant asks you to approve an action.');
    } else {
      const card = this.approvals.cards.get(data.tool_use_id);
      if (card && !card.decided) {
        card.decide({ approval: data.approved ? 'approved' : 'declined', reason: data.reason });
      }
    }
  }

  /** Make `id` the open chat, the one the page shows next time too. */
  remember(id) {
    this.sessionId = id;
    localStorage.setItem(SESSION_KEY, id);
    address(chatPath(id));
  }

  /** Show an empty new chat; the session is created with the first message. */
  clear() {
    detach(this);
    this.loads += 1;
    this.sessionId = null;
    this.shown = null;
    localStorage.removeItem(SESSION_KEY);
    address('/');
    this.forget();
    this.ui.title.textContent = 'New chat';
    this.ui.title.title = '';
    document.title = 'Finance chat';
    this.ui.empty.hidden = false;
    this.onChange();
  }

  forget() {
    this.ui.turns.replaceChildren();
    this.views = [];
    this.queue = [];
    this.approvals.clear();
  }

  /**
   * Draw a chat from storage (or from `given`, a session detail just fetched) and re-attach
   * to its running turn and queued messages; `keepScroll` leaves the reader where they were
   * (`fromBottom`: that far from the end, when messages were added above).
   */
  async open(id, given = null, keepScroll = false, fromBottom = null) {
    detach(this);
    this.remember(id);
    const load = ++this.loads;
    let session = given;
    try {
      session = session || (await api.getSession(id, true));
    } catch (err) {
      if (load !== this.loads) return;
      if (err.status === 404) this.onMissing(id);
      else this.onError(err);
      return;
    }
    if (load !== this.loads) return; // another chat was opened meanwhile
    const scrolled = this.ui.scroller.scrollTop;
    this.shown = session;
    this.forget();
    this.ui.empty.hidden = true;
    this.setTitle(session.title);
    this.onChange();
    const running = session.running_turn_id;
    const pending = new Map((session.approvals || []).map((a) => [a.tool_use_id, a]));
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
      decorate(view, turn, this.acts);
      const asked = [...turn.waiting].filter((toolId) => pending.has(toolId));
      for (const toolId of asked) this.approvals.show(pending.get(toolId));
      if (turn.waiting.size && !asked.length) this.approvals.load(turn.turnId);
      last = view;
    }
    this.noteModel(session.messages.findLast((m) => m.role === 'assistant' && m.model)?.model);
    const runningView = running ? live || this.newView({ turnId: running }) : null;
    for (const queued of session.queued || []) enqueue(this, queued.turn_id, queued.text, null);
    this.pinned = !keepScroll;
    if (running) {
      attach(this, running, runningView);
    } else if (!advance(this) && last && last.turnId) {
      const shown = last;
      api.getTurn(shown.turnId).then((t) => load === this.loads && shown.outcome(t), () => {});
    }
    if (keepScroll) {
      const { scroller } = this.ui;
      scroller.scrollTop = fromBottom === null ? scrolled : scroller.scrollHeight - fromBottom;
    }
    this.followScroll();
    this.renderStatus();
  }

  /** Draw the messages before those shown (the reader reached the top), keeping their place. */
  async loadEarlier() {
    const shown = this.shown;
    if (!shown?.earlier_cursor || this.running || this.loadingEarlier) return;
    this.loadingEarlier = true;
    try {
      const page = await api.earlierMessages(shown.id, shown.earlier_cursor);
      if (this.shown !== shown) return; // another chat was opened, or this one redrawn
      const { scrollHeight, scrollTop } = this.ui.scroller;
      await this.open(shown.id, withEarlier(shown, page), true, scrollHeight - scrollTop);
    } catch (err) {
      this.onError(err);
    } finally {
      this.loadingEarlier = false;
    }
  }

  /** Send a question (see sending.js); `body` and `replacing` for an edit or regenerate. */
  send(text, body = null, replacing = null) {
    return send(this, text, body, replacing);
  }

  /** Ask the server to cancel the running turn. */
  stop() {
    return stop(this);
  }
}

/** The address of chat `id`: `/c/<id>`, a link that opens it. */
export function chatPath(id) {
  return `/c/${encodeURIComponent(id)}`;
}

/** The chat the address names (`/c/<id>`), or null. */
export function chatInAddress() {
  const found = /^\/c\/([^/]+)$/.exec(location.pathname);
  return found ? decodeURIComponent(found[1]) : null;
}

/** Show `path` in the address bar as a new history entry (Back returns), unless it is there. */
function address(path) {
  if (location.pathname !== path) history.pushState(null, '', path);
}
