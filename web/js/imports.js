// Statement import on the page: upload (button or drop), review the draft, commit, undo, history.

import { confirmDialog } from './dialogs.js';
import { el } from './dom.js';
import { importApi, importErrorText } from './import-api.js';
import { STATUS_WORDS, reconciliationLine, rowLine, rowTable } from './import-table.js';
import { withProgress } from './import-progress.js';

// The roles a CSV column can take (statements/csvfile.py ROLES).
const ROLES = ['date', 'amount', 'debit', 'credit', 'payee', 'description', 'bank_id', 'currency'];
const IMPORT_WORDS = {
  drafting: 'Drafting', draft: 'Draft', committing: 'Committing', committed: 'Committed',
  undoing: 'Undoing', undone: 'Undone',
};

const ACCEPT = '.ofx,.qfx,.qif,.csv,.tsv,.txt,.xml,.sta,.mt940';

const statusWord = (record) => IMPORT_WORDS[record.status] || record.status;
const $ = (id) => document.getElementById(id);

/** A plain button that runs `onclick`. */
const button = (text, props, onclick) => el('button', { type: 'button', text, onclick, ...props });

/** The import dialog, built once and kept in the page. */
class ImportDialog {
  constructor() {
    this.current = null; // the import shown
    this.file = null; // the file last chosen, kept to resubmit with a mapping
    this.historyCursor = null;
    this.build();
  }

  build() {
    this.fileInput = el('input', { id: 'import-file', type: 'file', accept: ACCEPT });
    this.account = el('select', { id: 'import-account' }, el('option', { value: '', text: 'A new account' }));
    this.currency = el('input', {
      id: 'import-currency', maxlength: '3', autocomplete: 'off', spellcheck: 'false',
      pattern: '[A-Za-z]{3}', placeholder: 'EUR', title: 'Three letters, e.g. EUR',
    });
    this.accountName = el('input', { id: 'import-account-name', maxlength: '80', autocomplete: 'off' });
    this.locale = el('input', {
      id: 'import-locale', maxlength: '20', autocomplete: 'off', spellcheck: 'false',
      placeholder: 'e.g. de_DE',
    });
    this.account.addEventListener('change', () => this.accountChosen());
    this.error = el('p', { id: 'import-error', class: 'import-error', role: 'alert', hidden: true });
    this.mapping = el('form', { id: 'import-mapping', class: 'import-mapping', hidden: true });
    this.mapping.addEventListener('submit', (e) => {
      e.preventDefault();
      this.sendMapping();
    });
    const field = (control, text) =>
      el('div', { class: 'import-field' }, el('label', { for: control.id, text }), control);
    const upload = el(
      'form',
      { id: 'import-upload', class: 'import-upload' },
      field(this.fileInput, 'Statement file (OFX, QFX, QIF, CAMT, MT940, CSV)'),
      el(
        'div',
        { class: 'import-fields' },
        field(this.account, 'Account, for files that do not name one'),
        field(this.accountName, 'Name of a new account (optional)'),
        field(this.currency, 'Currency, for files that do not state one'),
        field(this.locale, 'How the file writes numbers and dates (optional)'),
      ),
      el('div', { class: 'import-actions' },
        el('button', { type: 'submit', class: 'primary', text: 'Upload' })),
      el('p', { class: 'muted drop-hint', text: 'Or drop a statement file anywhere on the page.' }),
    );
    upload.addEventListener('submit', (e) => {
      e.preventDefault();
      const file = this.fileInput.files[0] || this.file; // a failed upload is tried again
      if (file) this.upload(file);
      else this.showError('Choose a statement file first.');
    });
    this.draft = el('section', {
      id: 'import-draft', class: 'import-draft', 'aria-labelledby': 'import-draft-title', hidden: true,
    });
    this.historyList = el('ul', { id: 'import-history', class: 'import-history' });
    const older = () => this.loadHistory(true);
    this.historyMore = button('Older imports', { class: 'link-button', hidden: true }, older);
    this.home = el(
      'div',
      { class: 'import-home' },
      upload,
      this.mapping,
      el('section', { class: 'import-past', 'aria-labelledby': 'import-history-title' },
        el('h3', { id: 'import-history-title', text: 'Past imports' }),
        this.historyList,
        this.historyMore),
    );
    this.categories = el('datalist', { id: 'import-categories' });
    this.status = el('p', { id: 'import-note', class: 'import-note', role: 'status' });
    this.progress = el('progress', { id: 'import-progress', class: 'import-progress', max: '1', hidden: true });
    this.dialog = el(
      'dialog',
      { id: 'imports', class: 'dialog import-dialog', 'aria-labelledby': 'imports-title' },
      el(
        'div',
        { class: 'import-head' },
        el('h2', { id: 'imports-title', text: 'Import a statement' }),
        button('✕', { class: 'icon-button', 'aria-label': 'Close the import' }, () => this.dialog.close()),
      ),
      this.error,
      this.status,
      this.progress,
      this.home,
      this.draft,
      this.categories,
    );
    document.body.append(this.dialog);
  }

  /** Open on the upload form and the history. */
  async open() {
    this.say('');
    this.showError('');
    this.showHome();
    if (!this.dialog.open) this.dialog.showModal();
    this.fileInput.focus();
    await Promise.all([this.loadAccounts(), this.loadCategories(), this.loadHistory()]);
  }

  showHome() {
    this.current = null;
    this.draft.hidden = true;
    this.home.hidden = false;
    $('imports-title').textContent = 'Import a statement';
  }

  showError(text) {
    this.error.hidden = !text;
    this.error.textContent = text || '';
  }

  /** An existing account keeps its own name and currency. */
  accountChosen() {
    const existing = Boolean(this.account.value);
    this.currency.disabled = existing;
    this.accountName.disabled = existing;
  }

  say(text) {
    this.status.textContent = text || '';
  }

  /** Run `work`, showing the progress `peek` reads meanwhile (import-progress.js). */
  withProgress(label, work, peek) {
    return withProgress(this.progress, (text) => this.say(text), label, work, peek);
  }


  async loadAccounts() {
    try {
      const accounts = await importApi.accounts();
      const chosen = this.account.value;
      this.account.replaceChildren(
        el('option', { value: '', text: 'A new account' }),
        ...accounts.map((a) =>
          el('option', { value: String(a.id), text: a.currency ? `${a.name} (${a.currency})` : a.name })),
      );
      this.account.value = chosen;
      this.accountChosen();
    } catch {
      // Without the list a file still lands in its own or a new account.
    }
  }

  async loadCategories() {
    try {
      const categories = await importApi.categories();
      this.categories.replaceChildren(...categories.map((c) => el('option', { value: c.name })));
    } catch {
      // The box still takes any name; a new one is created at commit.
    }
  }

  async loadHistory(more = false) {
    try {
      const page = await importApi.list(more ? this.historyCursor : null);
      if (!more) this.historyList.replaceChildren();
      if (!more && !page.imports.length) {
        this.historyList.append(el('li', { class: 'muted', text: 'No imports yet.' }));
      }
      for (const item of page.imports) this.historyList.append(this.historyItem(item));
      this.historyCursor = page.next_cursor;
      this.historyMore.hidden = !page.next_cursor;
    } catch (err) {
      this.showError(importErrorText(err));
    }
  }

  historyItem(item) {
    const counts = Object.entries(item.counts || {})
      .filter(([, n]) => n)
      .map(([status, n]) => `${n} ${(STATUS_WORDS[status] || status).toLowerCase()}`)
      .join(', ');
    const when = (item.committed_at || item.created_at || '').slice(0, 16).replace('T', ' ');
    return el(
      'li',
      { dataset: { importId: String(item.id), status: item.status } },
      el(
        'button',
        { type: 'button', class: 'history-open', onclick: () => this.show(item.id) },
        el('span', { class: 'history-name', text: item.filename || `Import ${item.id}` }),
        el('span', {
          class: 'muted', text: [statusWord(item), item.format, when, counts].filter(Boolean).join(' · '),
        }),
      ),
    );
  }

  /** Upload a file (chosen or dropped); `mapping` resubmits a CSV with its columns named. */
  async upload(file, mapping = null) {
    this.file = file;
    this.showError('');
    this.say(`Reading ${file.name}…`);
    try {
      const fields = {
        account_id: this.account.value,
        currency: this.account.value ? null : this.currency.value.trim().toUpperCase(),
        account_name: this.account.value ? null : this.accountName.value.trim(),
        locale: this.locale.value.trim(),
        mapping: mapping ? JSON.stringify(mapping) : null,
      };
      // The upload's id is known when it answers: meanwhile the newest import is this one.
      const newest = async () => (await importApi.list(null, 1)).imports[0];
      const record = await this.withProgress('Stored', () => importApi.upload(file, fields), newest);
      this.mapping.hidden = true;
      this.fileInput.value = '';
      this.file = null;
      await this.show(record.id, record);
    } catch (err) {
      if (err.code === 'mapping_required') this.askMapping(err);
      else this.showError(importErrorText(err));
    } finally {
      this.say('');
    }
  }

  /** The form that names a CSV's columns: a select per role, the suggestion chosen. */
  askMapping(err) {
    const columns = err.details.columns || [];
    const suggested = err.details.suggested_mapping || {};
    const selects = ROLES.map((role) => {
      const id = `map-${role}`;
      const select = el(
        'select',
        { id, name: role },
        el('option', { value: '', text: '(not in this file)' }),
        ...columns.map((c) => el('option', { value: c, text: c })),
      );
      select.value = suggested[role] && columns.includes(suggested[role]) ? suggested[role] : '';
      const label = el('label', { for: id, text: role.replace('_', ' ') });
      return el('div', { class: 'map-field' }, label, select);
    });
    this.mapping.replaceChildren(
      el('h3', { id: 'import-mapping-title', text: 'Which column is which?' }),
      el('p', { class: 'muted' },
        `The columns of ${this.file.name} were not recognised. Give at least the date and the amount `
        + '(or debit and credit); the choice is kept for this account’s next file.'),
      el('div', { class: 'map-grid' }, ...selects),
      el('div', { class: 'import-actions' },
        el('button', { type: 'submit', class: 'primary', text: 'Read the file with these columns' }),
        el('button', { type: 'button', text: 'Cancel', onclick: () => { this.mapping.hidden = true; } })),
    );
    this.mapping.hidden = false;
    this.showError(err.message); // the form lists the columns
    this.mapping.querySelector('select').focus();
  }

  sendMapping() {
    const mapping = {};
    for (const select of this.mapping.querySelectorAll('select')) {
      if (select.value) mapping[select.name] = select.value;
    }
    this.upload(this.file, mapping);
  }

  /** Show one import: summary, reconciliation, actions and its first page of rows. */
  async show(id, record = null) {
    this.showError('');
    this.say('');
    try {
      this.current = record || (await importApi.show(id));
    } catch (err) {
      this.showError(importErrorText(err));
      return;
    }
    this.home.hidden = true;
    this.draft.hidden = false;
    this.draft.replaceChildren();
    this.renderRecord();
    this.filter = el(
      'select',
      { id: 'import-filter' },
      el('option', { value: '', text: 'All rows' }),
      ...Object.entries(STATUS_WORDS).map(([status, words]) => el('option', { value: status, text: words })),
    );
    this.filter.addEventListener('change', () => this.restartRows());
    this.table = rowTable();
    this.more = button('More rows', { class: 'link-button rows-more', hidden: true }, () => this.loadRows());
    this.draft.append(
      el('div', { class: 'row-filter' }, el('label', { for: 'import-filter', text: 'Show' }), this.filter),
      el('div', { class: 'rows-wrap' }, this.table),
      this.more,
    );
    await this.restartRows();
    $('import-draft-title').focus();
  }

  /** Show the rows again from the first page, of the status the filter picks. */
  async restartRows() {
    this.rowsCursor = null;
    this.table.tBodies[0].replaceChildren();
    await this.loadRows();
  }

  renderRecord() {
    const rec = this.current;
    const counts = el('ul', { class: 'import-counts', 'aria-label': 'Rows by status' });
    for (const [status, words] of Object.entries(STATUS_WORDS)) {
      const n = rec.counts?.[status] || 0;
      counts.append(el('li', { class: `row-status ${status}`, text: `${n} ${words.toLowerCase()}` }));
    }
    const draft = rec.status === 'draft';
    const stalled = Boolean(rec.progress && rec.progress.stalled);
    const actions = el('div', { class: 'import-actions' });
    if (stalled) {
      // Its worker died mid-way: a commit resumes, an undo or a discard goes on (or back).
      if (rec.status === 'committing') {
        actions.append(button('Resume the commit', { id: 'import-commit', class: 'primary' }, () => this.commit()));
      }
      const words = rec.status === 'drafting' ? 'Discard draft' : 'Undo this import';
      actions.append(button(words, { id: 'import-undo', class: 'danger' }, () => this.undo()));
    } else if (draft) {
      actions.append(
        button('Commit included rows', { id: 'import-commit', class: 'primary' }, () => this.commit()),
        button('Discard draft', { id: 'import-discard', class: 'danger' }, () => this.undo()),
      );
    } else if (rec.status === 'committed') {
      actions.append(button('Undo this import', { id: 'import-undo', class: 'danger' }, () => this.undo()));
    }
    actions.append(button('All imports', { id: 'import-back' }, () => this.backHome()));
    const head = el(
      'div',
      { class: 'draft-head' },
      el('h3', { id: 'import-draft-title', tabindex: '-1', text: rec.filename || `Import ${rec.id}` }),
      el('p', {
        class: 'muted',
        id: 'import-state',
        text: [
          statusWord(rec),
          rec.format,
          stalled ? `stopped at ${rec.progress.done} of ${rec.progress.total} rows` : '',
          rec.same_file_as ? `the same file as import ${rec.same_file_as}` : '',
        ].filter(Boolean).join(' · '),
      }),
      counts,
      el('ul', { class: 'import-recon', 'aria-label': 'Reconciliation' },
        ...(rec.accounts || []).map(reconciliationLine)),
      actions,
    );
    const old = this.draft.querySelector('.draft-head');
    if (old) old.replaceWith(head);
    else this.draft.replaceChildren(head);
  }

  async loadRows() {
    const id = this.current.id;
    const status = this.filter.value;
    try {
      const page = await importApi.rows(id, this.rowsCursor, status);
      if (this.current?.id !== id || this.filter.value !== status) return;
      const body = this.table.tBodies[0];
      const editable = this.current.status === 'draft';
      const onInclude = (r, on, box) => this.include(r, on, box);
      const onCategory = (r, name, box) => this.categorise(r, name, box);
      for (const row of page.rows) body.append(rowLine(row, { editable, onInclude, onCategory }));
      this.rowsCursor = page.next_cursor;
      this.more.hidden = !page.next_cursor;
    } catch (err) {
      this.showError(importErrorText(err));
    }
  }

  async include(row, on, box) {
    box.disabled = true;
    try {
      const changed = await importApi.editRow(this.current.id, row.id, { include: on });
      box.closest('tr').classList.toggle('excluded', !changed.include);
      box.checked = changed.include;
      this.current = await importApi.show(this.current.id);
      this.renderRecord();
    } catch (err) {
      box.checked = !on;
      this.showError(importErrorText(err));
    } finally {
      box.disabled = false;
    }
  }

  async categorise(row, name, box) {
    try {
      const changed = await importApi.editRow(this.current.id, row.id, { category: name });
      box.value = changed.category || '';
      row.category = changed.category;
    } catch (err) {
      box.value = row.category || '';
      this.showError(importErrorText(err));
    }
  }

  async commit() {
    this.say('Committing…');
    try {
      const id = this.current.id;
      const done = await this.withProgress('Added', () => importApi.commit(id), () => importApi.show(id));
      await this.show(done.id);
      this.say(`Added ${done.added} transaction${done.added === 1 ? '' : 's'}.`);
    } catch (err) {
      this.say('');
      this.showError(importErrorText(err));
    }
  }

  async undo() {
    const draft = ['draft', 'drafting'].includes(this.current.status);
    const yes = await confirmDialog(
      draft
        ? { title: 'Discard this draft?', text: 'Its rows are dropped; no transaction was added.',
          ok: 'Discard' }
        : { title: 'Undo this import?', text: 'Exactly the transactions it added are removed.',
          ok: 'Undo import' },
    );
    if (!yes) return;
    try {
      const id = this.current.id;
      const done = await this.withProgress('Removed', () => importApi.undo(id), () => importApi.show(id));
      if (done.status === 'undone') await this.show(done.id);
      else await this.backHome();
      const n = done.removed_transactions;
      const plural = n === 1 ? '' : 's';
      this.say(done.status === 'undone' ? `Removed ${n} transaction${plural}.` : 'Draft discarded.');
    } catch (err) {
      this.showError(importErrorText(err));
    }
  }

  async backHome() {
    this.showHome();
    this.fileInput.focus();
    await this.loadHistory();
  }
}

let dialog = null;

function theDialog() {
  dialog ||= new ImportDialog();
  return dialog;
}

const hasFiles = (event) => [...(event.dataTransfer?.types || [])].includes('Files');

/** Wire the Import button and drag-and-drop of a file anywhere on the page. */
export function setupImports(button) {
  button.addEventListener('click', () => theDialog().open());
  let depth = 0; // dragenter/leave fire for every child crossed
  document.addEventListener('dragenter', (event) => {
    if (!hasFiles(event)) return;
    depth += 1;
    document.body.classList.add('dropping');
  });
  document.addEventListener('dragleave', () => {
    depth = Math.max(0, depth - 1);
    if (!depth) document.body.classList.remove('dropping');
  });
  document.addEventListener('dragover', (event) => {
    if (hasFiles(event)) event.preventDefault();
  });
  document.addEventListener('drop', (event) => {
    depth = 0;
    document.body.classList.remove('dropping');
    const file = event.dataTransfer?.files?.[0];
    if (!file) return;
    event.preventDefault();
    const d = theDialog();
    d.open().then(() => d.upload(file));
  });
}
