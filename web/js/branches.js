// Per-message controls for the conversation tree: edit a question (inline), regenerate an
// answer, and "‹ 2 / 3 ›" to show another version. They change the server's active branch,
// so they are disabled (class `needs-idle`) while a turn runs or waits in the queue.

import { api } from './rest.js';
import { el } from './dom.js';
import { storedTurns } from './history.js';

/**
 * Put a stored turn's controls on its view. `turn`: `{ question, answer }` from storedTurns;
 * `act`: `{ edit(view, question, text), regenerate(view, answerId), show(messageId) }`.
 */
export function decorate(view, turn, act) {
  for (const node of view.el.querySelectorAll('.branch-control')) node.remove();
  const { question, answer } = turn;
  if (question) {
    view.userActions.append(
      ...switcher(question, 'question', act),
      button('✎ Edit', 'Edit this question', 'edit', () => startEdit(view, question, act)),
    );
  }
  // An answer waiting for the user's decision on an action is not over: nothing to regenerate.
  if (answer && !turn.continued && !turn.waiting?.size) {
    const regen = button('↻ Regenerate', 'Regenerate this answer', 'regenerate', () =>
      act.regenerate(view, answer.last),
    );
    view.addAction(regen);
    for (const node of switcher(answer, 'answer', act)) view.addAction(node);
  }
}

function button(text, label, kind, onclick) {
  return el('button', {
    type: 'button',
    class: `copy branch-control needs-idle ${kind}`,
    'aria-label': label,
    text,
    onclick,
  });
}

/** "‹ n / m ›" for a message with several versions; nothing for one. */
function switcher(message, what, act) {
  const ids = message.sibling_ids || [];
  const at = ids.indexOf(message.id);
  if (ids.length < 2 || at < 0) return [];
  const go = (to) => () => act.show(ids[to]);
  const previous = button('‹', `Previous version of this ${what}`, 'previous', go(at - 1));
  const next = button('›', `Next version of this ${what}`, 'next', go(at + 1));
  previous.dataset.edge = String(at === 0);
  next.dataset.edge = String(at === ids.length - 1);
  const place = el('span', { class: 'version', text: `${at + 1} / ${ids.length}`, 'aria-hidden': 'true' });
  const label = `Version ${at + 1} of ${ids.length} of this ${what}`;
  return [el('span', { class: 'branch-control versions', role: 'group', 'aria-label': label }, previous, place, next)];
}

/** Turn the question's bubble into a form until Save (asks it again, as a sibling) or Cancel. */
function startEdit(view, question, act) {
  const bubble = view.el.querySelector('.msg.user .bubble');
  if (!bubble || view.el.querySelector('.edit-form')) return;
  const box = el('textarea', { class: 'edit-box', rows: 3, 'aria-label': 'Edit your question' });
  box.value = view.userText || '';
  const trigger = view.userActions.querySelector('.edit');
  const close = () => {
    form.remove();
    bubble.hidden = false;
    view.userActions.hidden = false;
    trigger?.focus();
  };
  const form = el(
    'form',
    { class: 'edit-form', 'aria-label': 'Edit your question' },
    box,
    el(
      'div',
      { class: 'edit-buttons' },
      el('button', { type: 'button', class: 'tool-button', text: 'Cancel', onclick: close }),
      el('button', { type: 'submit', class: 'tool-button primary', text: 'Save and ask' }),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = box.value.trim();
    if (!text) return;
    act.edit(view, question, text);
  });
  box.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      close();
    } else if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  bubble.hidden = true;
  view.userActions.hidden = true;
  bubble.after(form);
  box.focus();
  box.select();
}

/** Re-read `chat`'s session and refresh each shown turn's edit, regenerate and version controls. */
export async function refreshControls(chat) {
  const load = chat.loads;
  let session;
  try {
    session = await api.getSession(chat.sessionId);
  } catch {
    return; // the controls stay as they were; the next load redraws them
  }
  if (load !== chat.loads || chat.running) return;
  for (const turn of storedTurns(session.messages)) {
    const view = chat.views.find((v) => v.turnId && v.turnId === turn.turnId);
    if (view && !view.running) decorate(view, turn, chat.acts);
  }
  chat.renderStatus();
}

/** Show another version (a sibling message) in `chat`, and the branch through it. */
export async function showBranch(chat, messageId) {
  if (chat.running || chat.queue.length || !chat.sessionId) return;
  const focused = document.activeElement;
  const at = chat.views.findIndex((v) => v.el.contains(focused));
  const where = focused?.closest('.user-actions') ? '.user-actions' : '.turn-actions';
  let session;
  try {
    session = await api.switchBranch(chat.sessionId, messageId);
  } catch (err) {
    if (err.status === 409) chat.open(chat.sessionId, null, true);
    else chat.onError(err);
    return;
  }
  await chat.open(chat.sessionId, session, true);
  // Keep the keyboard where it was: on the same turn's version buttons.
  const buttons = [...(chat.views[at]?.el.querySelectorAll(`${where} .versions button`) || [])];
  const usable = buttons.filter((b) => !b.disabled);
  (usable.find((b) => b.className === focused?.className) || usable[0])?.focus();
}
