// The sidebar's list of chats: grouped by date (Today, Yesterday, Previous 7 days, Older), or
// the results of a search with the words that matched; open one, delete one.

import { el } from './dom.js';

const DAY_MS = 86400000;
const TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** The date group of `moment` as seen on `now`'s local calendar. */
export function dateGroup(moment, now = new Date()) {
  const midnight = new Date(now.getFullYear(), now.getMonth(), now.getDate()).getTime();
  const time = moment.getTime();
  if (time >= midnight) return 'Today';
  if (time >= midnight - DAY_MS) return 'Yesterday';
  if (time >= midnight - 7 * DAY_MS) return 'Previous 7 days';
  return 'Older';
}

export class SessionList {
  constructor(root, { onOpen, onDelete }) {
    Object.assign(this, { root, onOpen, onDelete });
  }

  /** Draw `sessions` (most recently active first) under date headings, marking `currentId`. */
  render(sessions, currentId) {
    const groups = new Map();
    for (const session of sessions) {
      const when = lastActive(session);
      const name = when ? dateGroup(new Date(when)) : 'Older';
      if (!groups.has(name)) groups.set(name, []);
      groups.get(name).push(this.item(session, currentId));
    }
    const items = [...groups].map(([name, rows]) =>
      el(
        'li',
        { class: 'group' },
        el('h2', { class: 'group-title', id: `group-${slug(name)}`, text: name }),
        el('ul', { 'aria-labelledby': `group-${slug(name)}` }, ...rows),
      ),
    );
    if (!items.length) items.push(el('li', { class: 'none', text: 'No chats yet.' }));
    this.root.replaceChildren(...items);
  }

  /** Show a line of words instead of chats (e.g. while signed out). */
  message(text) {
    this.root.replaceChildren(el('li', { class: 'none', text }));
  }

  /** Draw search results for `query`: each with the words around the match; `more` while
   * older chats are still being searched. */
  renderResults(sessions, currentId, query, more = false) {
    const items = sessions.map((session) => this.item(session, currentId, query));
    if (more) items.push(el('li', { class: 'none', text: 'Searching older chats…' }));
    else if (!items.length) items.push(el('li', { class: 'none', text: `No chats mention “${query}”.` }));
    this.root.replaceChildren(...items);
  }

  item(session, currentId, query = null) {
    const title = session.title || 'Untitled chat';
    const active = lastActive(session);
    const when = active ? TIME.format(new Date(active)) : '';
    const snippet = query && session.match?.in === 'messages' ? marked(session.match.snippet, query) : null;
    return el(
      'li',
      { class: session.id === currentId ? 'session current' : 'session', dataset: { sessionId: session.id } },
      el(
        'button',
        {
          type: 'button',
          class: 'open',
          title: when ? `${title}\n${when}` : title,
          'aria-current': session.id === currentId ? 'page' : null,
          onclick: () => this.onOpen(session.id),
        },
        el('span', { class: 'title', text: title }),
        snippet,
      ),
      el('button', {
        type: 'button',
        class: 'delete',
        title: 'Delete this chat',
        'aria-label': `Delete chat “${title}”`,
        text: '×',
        onclick: () => this.onDelete(session.id),
      }),
    );
  }
}

/**
 * Every result of a search, page after page, from `fetchPage(cursor)`. A page the server cut
 * at its time budget (`partial`, maybe empty) is followed by the next; a 429 (too many
 * searches at once) is asked again after its Retry-After. `onFound(found, more)` after each
 * page; stops at the end, at `max` results, or as soon as `current()` is false.
 */
export async function searchAll(fetchPage, { current, onFound, max = 500 }) {
  const found = [];
  let cursor = null;
  while (current()) {
    let page;
    try {
      page = await fetchPage(cursor);
    } catch (err) {
      if (err.status !== 429) throw err;
      await new Promise((resolve) => setTimeout(resolve, 1000 * (err.details?.retry_after || 1)));
      continue;
    }
    if (!current()) break;
    found.push(...page.sessions);
    cursor = page.next_cursor;
    const more = Boolean(cursor) && found.length < max;
    onFound(found, more);
    if (!more) break;
  }
  return found;
}

function slug(name) {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

/** The snippet with the first occurrence of `query` marked (case-insensitively). */
function marked(snippet, query) {
  const at = snippet.toLowerCase().indexOf(query.toLowerCase());
  if (at < 0) return el('span', { class: 'snippet', text: snippet });
  return el(
    'span',
    { class: 'snippet' },
    snippet.slice(0, at),
    el('mark', { text: snippet.slice(at, at + query.length) }),
    snippet.slice(at + query.length),
  );
}

/** When a chat was last active: its last turn or rename, else its creation. */
function lastActive(session) {
  return session.updated_at || session.created_at || null;
}
