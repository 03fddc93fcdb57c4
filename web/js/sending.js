// Sending a question: a new chat gets its session first (titled by the question), then the
// turn starts, or waits in the queue behind a running one. Edits and regenerations send too,
// replacing the turns shown from the one they redo.

import { api } from './rest.js';
import { attach } from './live.js';
import { cancelQueued, enqueue } from './queue.js';
import { MAX_MESSAGE_CHARS } from './protocol.js';

/**
 * Send `text` in `chat`. `body`: an edit or regenerate instead of a new message; `replacing`:
 * the turn it replaces on screen. While a turn runs the message is queued behind it.
 */
export async function send(chat, text, body = null, replacing = null) {
  if (chat.busy || !text.trim()) return;
  if (roomLeft(text) < 0) {
    // Refused here, before a new chat's session exists: no empty chat is left behind.
    chat.onError({ code: 'message_too_large', message: tooLong(text) });
    return;
  }
  if (replacing && (chat.running || chat.queue.length)) return;
  chat.busy = true;
  chat.renderStatus();
  if (!chat.sessionId && !(await createSession(chat, text))) return;
  if (!body) chat.ui.input.value = '';
  if (replacing) chat.dropFrom(replacing);
  const behind = chat.running || chat.queue.length > 0;
  const message = body ? null : { message: text, client_id: clientId(chat, text) };
  const view = chat.newView({ userText: text });
  if (message) chat.unsent.view = view;
  chat.pinned = true;
  chat.followScroll();
  try {
    const turn = await api.startTurn(chat.sessionId, body || message);
    chat.unsent = null;
    chat.busy = false;
    if (turn.status === 'queued' && (chat.running || chat.queue.length)) {
      enqueue(chat, turn.turn_id, text, turn.events_url, view);
    } else {
      if (turn.status === 'queued' || behind) view.markQueued(() => cancelQueued(chat, view));
      view.el.dataset.turnId = turn.turn_id;
      await attach(chat, turn.turn_id, view, turn.events_url);
    }
    // A new message declines what waited for approval: the cards learn it from the server.
    if (chat.approvals.waiting.length) chat.approvals.poll();
  } catch (err) {
    view.fail(err.code, err.message);
    if (!body) chat.ui.input.value = text;
    chat.busy = false;
    chat.renderStatus();
    if (err.status === 401) chat.onError(err);
  }
}

/**
 * The id this message is sent with. A send that failed may have started its turn anyway (the
 * answer was lost), so sending the same text again reuses the id: the server returns that
 * turn rather than asking twice (docs/api.md, "Sending a message once").
 */
function clientId(chat, text) {
  const again = chat.unsent;
  if (again?.sessionId === chat.sessionId && again.text === text) {
    chat.dropView(again.view); // its failure is shown no more: the message is on its way
    return again.id;
  }
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const id = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  chat.unsent = { sessionId: chat.sessionId, text, id, view: null };
  return id;
}

/** Create the session a new chat's first message goes to; false (and said so) if it failed. */
async function createSession(chat, text) {
  try {
    const session = await api.createSession(text.trim().slice(0, 80));
    chat.remember(session.id);
    chat.setTitle(session.title);
    chat.onCreated(session);
    return true;
  } catch (err) {
    chat.busy = false;
    chat.renderStatus();
    chat.onError(err);
    return false;
  }
}

/** How many more characters `text` may have (negative: over the server's limit). */
export function roomLeft(text) {
  return MAX_MESSAGE_CHARS - [...text].length; // the server counts code points
}

/** Words for the composer near or over the limit, or '' while there is room. */
export function roomText(text) {
  const left = roomLeft(text);
  if (left < 0) return tooLong(text);
  if (left > MAX_MESSAGE_CHARS * 0.1) return '';
  return `${left.toLocaleString()} ${left === 1 ? 'character' : 'characters'} left`;
}

function tooLong(text) {
  const over = -roomLeft(text);
  return `${over.toLocaleString()} ${over === 1 ? 'character' : 'characters'} over the ${MAX_MESSAGE_CHARS.toLocaleString()}-character limit: shorten the message to send it.`;
}
