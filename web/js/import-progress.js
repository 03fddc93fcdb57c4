// The progress of a large import on the page: while a request drafts, commits or undoes one,
// the server writes its rows a batch at a time, and the page asks how far it is every
// IMPORT_POLL_MS (docs/imports.md "Drafts, commits and undo").

import { IMPORT_POLL_MS } from './protocol.js';

const BUSY = new Set(['drafting', 'committing', 'undoing']);

/** Run `work` (the request); meanwhile show on `bar` (a <progress>) and through `say` the
 * progress of the import record that `peek` reads, every IMPORT_POLL_MS. */
export async function withProgress(bar, say, label, work, peek) {
  let running = true;
  const watch = async () => {
    while (running) {
      await new Promise((resolve) => { setTimeout(resolve, IMPORT_POLL_MS); });
      if (!running) return;
      let rec = null;
      try {
        rec = await peek();
      } catch {
        rec = null; // the request's own answer says what went wrong
      }
      const p = rec && rec.progress;
      if (running && p && p.total && BUSY.has(rec.status)) {
        bar.max = p.total;
        bar.value = p.done;
        bar.hidden = false;
        say(`${label} ${p.done.toLocaleString()} of ${p.total.toLocaleString()} rows…`);
      }
    }
  };
  watch();
  try {
    return await work();
  } finally {
    running = false;
    bar.hidden = true;
  }
}
