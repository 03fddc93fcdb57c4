// The sidebar's list of chats: open one, delete one.

import { el } from './dom.js';

const DATE = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export class SessionList {
  constructor(root, { onOpen, onDelete }) {
    Object.assign(this, { root, onOpen, onDelete });
  }

  /** Draw `sessions` (newest first), marking `currentId`. */
  render(sessions, currentId) {
    const items = sessions.map((session) => {
      const title = session.title || 'Untitled chat';
      const when = session.created_at ? DATE.format(new Date(session.created_at)) : '';
      return el(
        'li',
        { class: session.id === currentId ? 'session current' : 'session', dataset: { sessionId: session.id } },
        el(
          'button',
          { type: 'button', class: 'open', title, onclick: () => this.onOpen(session.id) },
          el('span', { class: 'title', text: title }),
          el('span', { class: 'when', text: when }),
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
    });
    if (!items.length) items.push(el('li', { class: 'none', text: 'No chats yet.' }));
    this.root.replaceChildren(...items);
  }
}
