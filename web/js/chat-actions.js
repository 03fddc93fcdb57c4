// What can be done to the open chat from the top bar: rename, export (Markdown or JSON) and
// delete (after a confirmation that says when an answer is still being written).

import { api } from './rest.js';
import { confirmDialog, toast } from './dialogs.js';

const $ = (id) => document.getElementById(id);

/** Rename the open chat in place: the title becomes a field until saved or cancelled. */
export class Renamer {
  /** `current()`: the open session's id; `onRenamed(session)`; `onError(err)`. */
  constructor({ current, onRenamed, onError }) {
    Object.assign(this, { current, onRenamed, onError });
    this.form = $('rename-form');
    this.input = $('rename-input');
    this.title = $('chat-title');
    this.actions = $('chat-actions');
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.save();
    });
    $('rename-cancel').addEventListener('click', () => this.close());
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        event.stopPropagation();
        this.close();
      }
    });
  }

  get open() {
    return !this.form.hidden;
  }

  start() {
    this.input.value = this.title.textContent;
    this.form.hidden = false;
    this.title.hidden = true;
    this.actions.hidden = true;
    this.input.focus();
    this.input.select();
  }

  close() {
    this.form.hidden = true;
    this.title.hidden = false;
    this.actions.hidden = !this.current();
    $('rename').focus();
  }

  async save() {
    const title = this.input.value.trim();
    const id = this.current();
    if (!title || !id) return;
    try {
      this.onRenamed(await api.renameSession(id, title));
    } catch (err) {
      this.onError(err);
      return;
    }
    this.close();
  }
}

/** Download the chat `id` as `format` (`md` or `json`), named by the server. */
export async function exportChat(id, format) {
  const { blob, name } = await api.exportSession(id, format);
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  toast(`Saved ${name}`);
}

/**
 * Ask before deleting a chat; say so when an answer is being written in it (deleting stops
 * it). `running`: whether the page follows an answer in it; other chats are asked about.
 */
export async function confirmDelete(session, running) {
  let answering = running;
  if (!answering) {
    try {
      answering = Boolean((await api.getSession(session.id)).running_turn_id);
    } catch {
      answering = false; // the delete itself will tell what is wrong
    }
  }
  const title = session.title || 'Untitled chat';
  const stops = answering ? ' An answer is being written in it right now: deleting stops it.' : '';
  return confirmDialog({
    title: 'Delete this chat?',
    text: `“${title}” and all its messages will be deleted for good.${stops}`,
    ok: answering ? 'Stop and delete' : 'Delete',
  });
}
