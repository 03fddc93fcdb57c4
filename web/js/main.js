// Wires the page together: signing in and out, the list of chats (grouped, searchable), the
// open conversation and its actions, the phone layout, the theme and the keyboard.

import { adoptTokenFromAddress, api, getToken, setToken } from './rest.js';
import { Renamer, confirmDelete, exportChat } from './chat-actions.js';
import { Conversation, chatInAddress } from './conversation.js';
import { copyFrom, listenForCodeCopies } from './copy.js';
import { listenForLinks, toast } from './dialogs.js';
import { el } from './dom.js';
import { roomLeft, roomText } from './sending.js';
import { SessionList, searchAll } from './sessions.js';
import { SourcesPanel } from './sources.js';
import { initTheme } from './theme.js';
import { setupImports } from './imports.js';
import { ToolsPanel } from './tools-panel.js';
import { ConnectedAppsPanel } from './connected-apps.js';
import { EXAMPLES, errorText } from './words.js';

const $ = (id) => document.getElementById(id);
const SEARCH_DELAY_MS = 250;
const PHONE = matchMedia('(max-width: 760px)');

const ui = {
  turns: $('turns'),
  scroller: $('conversation'),
  empty: $('empty'),
  title: $('chat-title'),
  demo: $('demo-banner'),
  notice: $('notice'),
  room: $('room'),
  status: $('status'),
  live: $('live'),
  form: $('composer'),
  input: $('message'),
  send: $('send'),
  stop: $('stop'),
  tokenForm: $('token-form'),
  token: $('token'),
  tokenNeeded: $('token-needed'),
  signOut: $('sign-out'),
  search: $('search'),
  actions: $('chat-actions'),
};

let sessions = [];
let apps = null;
let searches = 0;

const list = new SessionList($('sessions'), {
  onOpen(id) {
    notify(null);
    closeSidebar();
    if (ui.search.value.trim()) markCurrent(id);
    else list.render(sessions, id);
    chat.open(id);
  },
  onDelete: removeSession,
});

const renamer = new Renamer({
  current: () => chat.sessionId,
  onRenamed(session) {
    const known = sessions.find((s) => s.id === session.id);
    if (known) known.title = session.title;
    chat.setTitle(session.title);
    showList();
    toast('Chat renamed');
  },
  onError: notify,
});

const chat = new Conversation(ui, {
  onCreated(session) {
    sessions.unshift(session);
    showList();
  },
  onMissing(id) {
    sessions = sessions.filter((s) => s.id !== id);
    newChat();
    notify({ code: 'chat_not_found' });
  },
  onError: notify,
  onCopy: copyFrom,
  onChange() {
    ui.actions.hidden = !chat.sessionId || renamer.open;
  },
});

/** `text` with its `code spans` as <code> (a notice's only Markdown), the rest as text. */
function inlineCode(text) {
  return String(text).split(/`([^`]+)`/).map((part, i) => (i % 2 ? el('code', { text: part }) : part));
}

function notify(err) {
  ui.notice.hidden = !err;
  if (!err) return;
  ui.notice.replaceChildren(...inlineCode(errorText(err.code, err.message)));
  if (err.status === 401) askForToken();
}

function signedIn(yes) {
  ui.tokenNeeded.hidden = yes;
  ui.signOut.hidden = !yes;
  if (!yes) ui.empty.hidden = true;
}

function askForToken() {
  signedIn(false);
  list.message('Sign in to see your chats.');
  ui.token.focus();
}

/** A chat continued now goes to the top of the list, as the server lists it. */
function moveToTop(id) {
  const session = sessions.find((s) => s.id === id);
  if (!session || sessions[0] === session) return;
  sessions = [{ ...session, updated_at: new Date().toISOString() }, ...sessions.filter((s) => s !== session)];
  if (!ui.search.value.trim()) showList();
}

function newChat() {
  chat.clear();
  showList();
  ui.input.focus();
}

function markCurrent(id) {
  for (const item of document.querySelectorAll('#sessions .session')) {
    item.classList.toggle('current', item.dataset.sessionId === id);
  }
}

/** Draw the list: every chat by date, or the current search's results. */
async function showList() {
  const query = ui.search.value.trim();
  if (!query) {
    searches += 1;
    list.render(sessions, chat.sessionId);
    return;
  }
  const mine = ++searches;
  try {
    await searchAll((cursor) => api.searchSessions(query, cursor), {
      current: () => mine === searches,
      onFound: (found, more) => list.renderResults(found, chat.sessionId, query, more),
    });
  } catch (err) {
    if (mine === searches) notify(err);
  }
}

async function removeSession(id) {
  const session = sessions.find((s) => s.id === id) || { id, title: null };
  const running = chat.sessionId === id && chat.running;
  if (!(await confirmDelete(session, running))) return;
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
  else showList();
  toast(`Deleted “${session.title || 'Untitled chat'}”`);
}

async function start() {
  signedIn(Boolean(getToken()));
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
  apps?.count(); // changes apps asked for show on the Connected apps button
  const named = chatInAddress();
  const saved = Conversation.saved();
  if (named) list.onOpen(named);
  else if (saved && sessions.some((s) => s.id === saved)) list.onOpen(saved);
  else newChat();
}

// Back and Forward move between the chats opened, by their addresses.
window.addEventListener('popstate', () => {
  if (!getToken()) return;
  const named = chatInAddress();
  if (named && named !== chat.sessionId) list.onOpen(named);
  else if (!named && chat.sessionId) newChat();
});

function signOut() {
  setToken('');
  chat.clear();
  sessions = [];
  askForToken();
}

function openSidebar() {
  document.body.classList.add('sidebar-open');
  $('menu').setAttribute('aria-expanded', 'true');
  $('scrim').hidden = false;
  $('new-chat').focus();
}

function closeSidebar() {
  if (!document.body.classList.contains('sidebar-open')) return;
  document.body.classList.remove('sidebar-open');
  $('menu').setAttribute('aria-expanded', 'false');
  $('scrim').hidden = true;
  $('menu').focus();
}

/** On a phone the chat's actions fold behind the ⋯ button: unfold or fold them. */
function showActions(open) {
  document.querySelector('.topbar').classList.toggle('actions-open', open);
  $('more').setAttribute('aria-expanded', String(open));
}

function fitComposer() {
  ui.input.style.height = 'auto';
  ui.input.style.height = `${ui.input.scrollHeight + 2}px`;
  // Near the server's limit the composer says how much room is left, or how far over it is.
  const words = roomText(ui.input.value);
  ui.room.hidden = !words;
  ui.room.textContent = words;
  ui.room.classList.toggle('over', roomLeft(ui.input.value) < 0);
}

function drawExamples() {
  $('examples').replaceChildren(
    ...EXAMPLES.map((question) =>
      el(
        'li',
        {},
        el('button', {
          type: 'button',
          class: 'example',
          text: question,
          onclick: () => {
            ui.input.value = question;
            ui.form.requestSubmit();
          },
        }),
      ),
    ),
  );
}

/** Esc: close what is open (rename, the phone's chat list, a search), else stop the answer. */
function onEscape(event) {
  if (event.key !== 'Escape' || event.defaultPrevented || document.querySelector('dialog[open]')) return;
  if (document.body.classList.contains('sidebar-open') && PHONE.matches) {
    if (document.activeElement === ui.search && ui.search.value) return;
    closeSidebar();
  } else if (chat.running) {
    event.preventDefault();
    chat.stop();
  }
}

function bind() {
  $('new-chat').addEventListener('click', () => {
    notify(null);
    closeSidebar();
    newChat();
  });
  $('menu').addEventListener('click', openSidebar);
  $('close-sidebar').addEventListener('click', closeSidebar);
  $('scrim').addEventListener('click', closeSidebar);
  PHONE.addEventListener('change', () => closeSidebar());
  $('more').addEventListener('click', () => {
    showActions(!document.querySelector('.topbar').classList.contains('actions-open'));
  });
  $('rename').addEventListener('click', () => {
    showActions(false);
    renamer.start();
  });
  for (const format of ['md', 'json']) {
    $(`export-${format}`).addEventListener('click', () => {
      showActions(false);
      exportChat(chat.sessionId, format).catch(notify);
    });
  }
  $('delete').addEventListener('click', () => {
    showActions(false);
    if (chat.sessionId) removeSession(chat.sessionId);
  });
  let timer = 0;
  ui.search.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(showList, SEARCH_DELAY_MS);
  });
  ui.signOut.addEventListener('click', signOut);
  ui.stop.addEventListener('click', () => chat.stop());
  ui.form.addEventListener('submit', (event) => {
    event.preventDefault();
    notify(null);
    const asked = chat.sessionId;
    chat.send(ui.input.value).then(() => {
      fitComposer();
      if (asked && asked === chat.sessionId) moveToTop(asked);
    });
  });
  ui.input.addEventListener('input', fitComposer);
  ui.input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      ui.form.requestSubmit();
    }
  });
  new ToolsPanel($('tools-open'));
  apps = new ConnectedAppsPanel($('apps-open'));
  new SourcesPanel(ui.turns); // before onEscape: with the panel open, Esc closes it
  document.addEventListener('keydown', onEscape);
  ui.tokenForm.addEventListener('submit', (event) => {
    event.preventDefault();
    setToken(ui.token.value.trim());
    ui.token.value = '';
    notify(null);
    start();
  });
  // A `#token=` link opened in a tab that already shows the page signs in with it.
  window.addEventListener('hashchange', () => {
    if (!adoptTokenFromAddress()) return;
    notify(null);
    start();
  });
  listenForCodeCopies(ui.turns);
  listenForLinks(ui.turns);
}

initTheme($('theme'));
setupImports($('import'));
adoptTokenFromAddress();
drawExamples();
bind();
chat.renderStatus();
start();
