// The page's two dialogs: "are you sure?" and "this link leaves the chat".

import { linkHost } from './markdown.js';

const $ = (id) => document.getElementById(id);

/** Ask a yes/no question in a modal dialog; resolves true when `ok` was chosen. */
export function confirmDialog({ title, text, ok }) {
  const dialog = $('confirm');
  $('confirm-title').textContent = title;
  $('confirm-text').textContent = text;
  $('confirm-ok').textContent = ok;
  dialog.returnValue = '';
  dialog.showModal();
  $('confirm-cancel').focus();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
  });
}

/** Show where a link in an answer goes before it is followed: nothing opens without a click. */
export function listenForLinks(root) {
  const dialog = $('link-dialog');
  const open = $('link-open');
  open.addEventListener('click', () => dialog.close());
  root.addEventListener('click', (event) => {
    const link = event.target.closest('a[href]');
    if (!link || !root.contains(link)) return;
    event.preventDefault();
    const href = link.getAttribute('href');
    $('link-host').textContent = linkHost(href);
    $('link-url').textContent = href;
    open.href = href;
    dialog.showModal();
    $('link-cancel').focus();
  });
}

/** A short message at the bottom of the screen for a few seconds. */
export function toast(text, ms = 4000) {
  const box = $('toast');
  box.textContent = text;
  box.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => {
    box.hidden = true;
  }, ms);
}
