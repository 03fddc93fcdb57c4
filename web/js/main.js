// Wires the page together: the API token, the list of chats, and the open conversation.

import { adoptTokenFromAddress, api, getToken, setToken } from './api.js';
import { Conversation } from './conversation.js';
import { SessionList } from './sessions.js';
import { errorText } from './words.js';

const $ = (id) => document.getElementById(id);

const ui = {
  turns: $('turns'),
  scroller: $('conversation'),
  empty: $('empty'),
  title: $('chat-title'),
  demo: $('demo-banner'),
  notice: $('notice'),
  status: $('status'),
  form: $('composer'),
  input: $('message'),
  send: $('send'),
  stop: $('stop'),
  tokenForm: $('token-form'),
  token: $('token'),
  tokenNeeded: $('token-needed'),
};

let sessions = [];

const list = new SessionList($('sessions'), {
  onOpen(id) {
    notify(null);
    list.render(sessions, id);
    chat.open(id);
  },
  onDelete: removeSession,
});

const chat = new Conversation(ui, {
  onCreated(session) {
    sessions.unshift(session);
    list.render(sessions, session.id);
  },
  onMissing(id) {
    sessions = sessions.filter((s) => s.id !== id);
    newChat();
  },
  onError: notify,
});

function notify(err) {
  ui.notice.hidden = !err;
  if (!err) return;
  ui.notice.textContent = errorText(err.code, err.message);
  if (err.status === 401) askForToken();
}

function askForToken() {
  ui.tokenNeeded.hidden = false;
  ui.empty.hidden = true;
  ui.token.focus();
}

function newChat() {
  chat.clear();
  list.render(sessions, null);
  ui.input.focus();
}

async function removeSession(id) {
  try {
    await api.deleteSession(id);
  } catch (err) {
    if (err.status !== 404) {
      notify(err);
      return;
    }
  }
  sessions = sessions.filter((s) => s.id !== id);
  if (chat.sessionId === id) newChat();
  else list.render(sessions, chat.sessionId);
}

async function start() {
  ui.tokenNeeded.hidden = true;
  if (!getToken()) {
    askForToken();
    return;
  }
  try {
    sessions = await api.listSessions();
  } catch (err) {
    notify(err);
    return;
  }
  const saved = Conversation.saved();
  if (saved && sessions.some((s) => s.id === saved)) list.onOpen(saved);
  else newChat();
}

function bind() {
  $('new-chat').addEventListener('click', () => {
    notify(null);
    newChat();
  });
  ui.stop.addEventListener('click', () => chat.stop());
  ui.form.addEventListener('submit', (event) => {
    event.preventDefault();
    notify(null);
    chat.send(ui.input.value);
  });
  ui.input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      ui.form.requestSubmit();
    }
  });
  ui.tokenForm.addEventListener('submit', (event) => {
    event.preventDefault();
    setToken(ui.token.value.trim());
    ui.token.value = '';
    notify(null);
    start();
  });
}

adoptTokenFromAddress();
bind();
chat.renderStatus();
start();
