// Following the chat's running turn: attach to its events (replayed from the start), detach
// when it ends or another chat opens, move on to the next queued turn, follow a turn an
// approval started, and ask the server to stop the running one.

import { api } from './rest.js';
import { refreshControls } from './branches.js';
import { Follower } from './follow.js';

/** Follow `turnId`'s events into `view`; `eventsUrl` is asked for when not given. */
export async function attach(chat, turnId, view, eventsUrl) {
  Object.assign(chat, { view, turnId, connection: 'live', stopping: false });
  view.announce = (text) => chat.say(text);
  chat.renderStatus();
  let url = eventsUrl;
  if (!url) {
    try {
      url = (await api.getTurn(turnId)).events_url;
    } catch (err) {
      if (chat.view === view) detach(chat);
      view.fail(err.code, err.message);
      return;
    }
  }
  if (chat.view !== view) return;
  chat.follower = new Follower({
    turnId,
    eventsUrl: url,
    onEvent: (type, data) => {
      view.handle(type, data);
      if (type === 'message_start') chat.noteModel(data.model);
    },
    onState: (connection) => {
      chat.connection = connection;
      chat.renderStatus();
    },
    onEnd: () => {
      if (chat.view !== view) return;
      detach(chat);
      if (!advance(chat)) refreshControls(chat);
      if (!chat.ui.turns.contains(document.activeElement)) chat.ui.input.focus();
    },
    onGone: () => {
      if (chat.view === view) chat.open(chat.sessionId);
    },
  }).start();
}

/** Stop following (the turn runs on at the server) and forget the chat's live state. */
export function detach(chat) {
  if (chat.follower) chat.follower.close();
  Object.assign(chat, { follower: null, view: null, turnId: null, stopping: false });
  chat.renderStatus();
}

/** Follow the next queued turn (its events wait until it starts), if any. */
export function advance(chat) {
  const next = chat.queue.shift();
  if (next) attach(chat, next.turnId, next.view, next.eventsUrl);
  return Boolean(next);
}

/** Follow a turn a decision started (it goes on from the paused turn `after`). */
export function follow(chat, turnId, eventsUrl, after) {
  const view = chat.newView({ turnId }, after);
  chat.pinned = true;
  if (chat.running) chat.queue.unshift({ turnId, view, eventsUrl });
  else attach(chat, turnId, view, eventsUrl);
  chat.followScroll();
}

/** Ask the server to cancel the running turn; its `turn_end` says when it stopped. */
export async function stop(chat) {
  if (!chat.turnId) return;
  chat.stopping = true;
  chat.renderStatus();
  try {
    await api.cancelTurn(chat.turnId);
  } catch (err) {
    chat.stopping = false;
    chat.renderStatus();
    chat.onError(err);
  }
}
