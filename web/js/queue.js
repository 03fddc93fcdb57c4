// Messages sent while a turn runs: the server queues them (`if_busy: "queue"`) and runs them
// in order; the page shows each greyed with "Queued" and a × that cancels it, until its turn
// starts and the conversation follows it (see live.js advance).

import { api } from './rest.js';
import { advance, detach } from './live.js';

/** Show a queued message of `chat` (sent here or in another tab) until its turn starts. */
export function enqueue(chat, turnId, text, eventsUrl, view = null) {
  const shown = view || chat.newView({ userText: text, turnId });
  shown.el.dataset.turnId = turnId;
  if (!shown.el.dataset.queued) shown.markQueued(() => cancelQueued(chat, shown));
  chat.queue.push({ turnId, view: shown, eventsUrl });
  chat.renderStatus();
  return shown;
}

/** Cancel a message that waits in the queue: it is removed and never answered. */
export async function cancelQueued(chat, view) {
  const turnId = view.turnId;
  if (!turnId) return;
  try {
    await api.cancelTurn(turnId);
  } catch (err) {
    if (err.status !== 404) {
      chat.onError(err);
      return;
    }
  }
  chat.queue = chat.queue.filter((q) => q.view !== view);
  const at = chat.views.indexOf(view);
  if (at >= 0) chat.views.splice(at, 1);
  view.el.remove();
  if (chat.view === view) {
    detach(chat);
    advance(chat);
  }
  chat.renderStatus();
  chat.ui.input.focus();
}
