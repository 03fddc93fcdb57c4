// An import's rows as a table: status (and why, or the row it may duplicate), include, values.

import { el } from './dom.js';
import { formatAmount, isNegative } from './money.js';

export const STATUS_WORDS = {
  new: 'New',
  duplicate: 'Duplicate',
  possible_duplicate: 'Possible duplicate',
  invalid: 'Invalid',
};

/** The empty table the rows are added to. */
export function rowTable() {
  return el(
    'table',
    { class: 'import-rows' },
    el('caption', { class: 'visually-hidden', text: 'Rows of the statement' }),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col', text: 'Include' }),
        el('th', { scope: 'col', text: 'Date' }),
        el('th', { scope: 'col', text: 'Payee and description' }),
        el('th', { scope: 'col', class: 'num', text: 'Amount' }),
        el('th', { scope: 'col', text: 'Status' }),
      ),
    ),
    el('tbody'),
  );
}

function amountCell(amount, currency) {
  const cell = el('td', { class: 'num amount', text: formatAmount(amount ?? '', currency) });
  if (isNegative(amount)) cell.classList.add('negative');
  return cell;
}

/** What the stored transaction a row matches is, in one line of text. */
function matchText(match, currency) {
  const who = match.merchant || match.description || `transaction ${match.id}`;
  return `${match.date || ''} · ${who} · ${formatAmount(match.amount ?? '', currency)}`;
}

function statusCell(row) {
  const cell = el(
    'td',
    { class: 'status-cell' },
    el('span', { class: `row-status ${row.status}`, text: STATUS_WORDS[row.status] || row.status }),
  );
  if (row.reason) cell.append(el('span', { class: 'row-why', text: row.reason }));
  if (row.matches) {
    const label = row.status === 'duplicate' ? 'Same as' : 'Matches';
    const match = matchText(row.matches, row.currency);
    cell.append(el('span', { class: 'row-why row-match' }, `${label}: `, match));
  }
  return cell;
}

/** A draft row's category: a text box offering the user's categories (the `import-categories` list). */
function categoryField(row, onCategory) {
  const box = el('input', {
    class: 'row-category', list: 'import-categories', maxlength: '80', placeholder: 'Category',
    'aria-label': `Category of row ${row.position ?? row.id}`, autocomplete: 'off',
  });
  box.value = row.category || '';
  box.addEventListener('change', () => onCategory(row, box.value.trim() || null, box));
  return box;
}

/**
 * One row of the table. `onInclude(row, checked, box)` is called when its checkbox changes and
 * `onCategory(row, name, box)` when its category does; `editable` is false once the import is
 * not a draft.
 */
export function rowLine(row, { editable, onInclude, onCategory }) {
  const who = row.merchant || row.description || '';
  const box = el('input', {
    type: 'checkbox',
    class: 'row-include',
    'aria-label': `Include row ${row.position ?? row.id}: ${who}`,
    checked: row.include,
    disabled: !editable || row.status === 'invalid',
  });
  box.addEventListener('change', () => onInclude(row, box.checked, box));
  const words = el('td', { class: 'row-text' }, el('span', { class: 'row-payee', text: row.merchant || '' }));
  if (row.description && row.description !== row.merchant) {
    words.append(el('span', { class: 'row-desc', text: row.description }));
  }
  if (editable && row.status !== 'invalid') words.append(categoryField(row, onCategory));
  else if (row.category) words.append(el('span', { class: 'row-cat', text: row.category }));
  return el(
    'tr',
    { dataset: { rowId: String(row.id), status: row.status }, class: row.include ? null : 'excluded' },
    el('td', { class: 'include-cell' }, box),
    el('td', { class: 'row-date', text: row.date || '—' }),
    words,
    amountCell(row.amount, row.currency),
    statusCell(row),
  );
}

/** The reconciliation of one account of the import, in words. */
export function reconciliationLine(account) {
  const name = account.account_name || (account.bank_ref ? `Account ${account.bank_ref}` : 'A new account');
  const rec = account.reconciliation;
  const line = el('li', { class: 'recon' }, el('strong', { text: name }), ' ');
  if (!rec) {
    line.append(el('span', { class: 'muted', text: 'The file states no balance to reconcile.' }));
    return line;
  }
  const closing = formatAmount(rec.closing, account.currency);
  if (rec.balanced) {
    line.classList.add('balanced');
    line.append(el('span', { text: `Balances: closing balance ${closing}.` }));
  } else {
    line.classList.add('off');
    const by = formatAmount(rec.difference, account.currency);
    line.append(el('span', { text: `Does not balance: closing balance ${closing} differs by ${by}.` }));
  }
  return line;
}
