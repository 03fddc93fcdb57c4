// What a cited transaction counts as by the money rule (spending, a refund, income or a
// transfer between the user's own accounts), and the user's correction of it: mark or unmark a
// transfer or a refund (PUT/DELETE /api/transactions/<id>/flow). A correction sticks: every
// answer from then on counts the row as corrected; answers already written stay as they are.

import { api } from './rest.js';
import { el } from './dom.js';
import { errorText } from './words.js';

const SAID = { spending: 'spending', refund: 'a refund', income: 'income', transfer: 'a transfer' };

/** What one transaction row counts as, and the corrections it offers (in its merchant cell). */
export function flowLine(row) {
  const line = el('span', { class: 'flow' });
  draw(line, row, '');
  return line;
}

/** The corrections a row offers, as [label, mark] (null mark: back to the rule). */
function corrections(row) {
  const out = [];
  if (row.flow_marked) out.push(['Undo my correction', null]);
  else if (row.flow === 'transfer') out.push(['Not a transfer', 'not_transfer']);
  else out.push(['Mark as transfer', 'transfer']);
  const moneyIn = !String(row.amount ?? '').trim().startsWith('-');
  if (!row.flow_marked && moneyIn && row.flow === 'refund') out.push(['Not a refund', 'not_refund']);
  if (!row.flow_marked && moneyIn && row.flow === 'income') out.push(['Mark as refund', 'refund']);
  return out;
}

function draw(cell, row, status) {
  const label = `Counts as ${SAID[row.flow] || row.flow}`;
  const buttons = corrections(row).map(([text, mark]) =>
    el('button', {
      type: 'button',
      class: 'tool-button flow-fix',
      'aria-label': `${text}: ${row.date || ''} ${row.merchant || ''} ${row.amount || ''}`.trim(),
      onclick: () => correct(cell, row, mark),
      text,
    }),
  );
  const parts = [
    el('span', { class: 'flow-said', text: `counts as ${SAID[row.flow] || row.flow || '—'}` }),
    row.flow_marked ? el('span', { class: 'flow-yours', text: ' (your correction)' }) : null,
    ...buttons,
    el('span', { class: 'flow-status', 'aria-live': 'polite', text: status }),
  ];
  cell.replaceChildren(...parts.filter(Boolean));
  cell.title = label;
}

async function correct(cell, row, mark) {
  for (const button of cell.querySelectorAll('button')) button.disabled = true;
  try {
    const changed = mark ? await api.markFlow(row.id, mark) : await api.unmarkFlow(row.id);
    draw(cell, changed, `Saved: it counts as ${SAID[changed.flow] || changed.flow} from now on.`);
  } catch (err) {
    draw(cell, row, errorText(err.code, err.message));
  }
  cell.querySelector('button')?.focus();
}
