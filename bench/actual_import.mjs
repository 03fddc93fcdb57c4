// Actual Budget's importer on one statement file, for bench/imports.py: its own parser
// (transactions-parse-file), then importTransactions into a new account of a new local
// budget (the reconciliation and duplicate matching it does for every file). Prints one JSON
// line: rows, parse and import CPU seconds, import wall seconds, peak RSS in MiB.
// Run from a folder where `npm install @actual-app/api` ran: node actual_import.mjs FILE DATA_DIR
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const require = createRequire(`${process.cwd()}/`);
const api = require('@actual-app/api');
const [file, dataDir] = process.argv.slice(2);
const seconds = (used) => (used.user + used.system) / 1e6;

function fromCsv(row) {
  // bench.statements' CSV: Buchungstag (dd.mm.yyyy); Auftraggeber/Empfänger; Verwendungszweck; Betrag (-12,34).
  const [d, m, y] = row.Buchungstag.split('.');
  return {
    date: `${y}-${m}-${d}`,
    amount: Number(row.Betrag.replace('.', '').replace(',', '.')),
    payee_name: row['Auftraggeber/Empfänger'],
    notes: row.Verwendungszweck,
  };
}

const lib = await api.init({ dataDir });
const started = process.cpuUsage();
const options = file.endsWith('.csv') ? { delimiter: ';', hasHeaderRow: true } : { importNotes: true };
const parsed = await lib.send('transactions-parse-file', { filepath: file, options });
const parseCpu = seconds(process.cpuUsage(started));
if (parsed.errors && parsed.errors.length) throw new Error(JSON.stringify(parsed.errors[0]));
// QIF dates come as the file writes them (the page asks their order): bench's are m/d/yyyy.
const isoDate = (date) => {
  const mdy = /^(\d+)\/(\d+)\/(\d{4})$/.exec(date);
  return mdy ? `${mdy[3]}-${mdy[1].padStart(2, '0')}-${mdy[2].padStart(2, '0')}` : date;
};
const rows = parsed.transactions.map((t) =>
  file.endsWith('.csv') ? fromCsv(t) : { ...t, date: isoDate(t.date) },
);
let importCpu = 0;
let importWall = 0;
await api.runImport('bench', async () => {
  const account = await api.createAccount({ name: 'Bench', type: 'checking' }, 0);
  const transactions = rows.map((t) => ({
    date: t.date,
    amount: api.utils.amountToInteger(t.amount),
    payee_name: t.payee_name,
    imported_payee: t.imported_payee,
    imported_id: t.imported_id,
    notes: t.notes,
  }));
  const cpu = process.cpuUsage();
  const wall = performance.now();
  await api.importTransactions(account, transactions);
  importCpu = seconds(process.cpuUsage(cpu));
  importWall = (performance.now() - wall) / 1000;
});
await api.shutdown();
console.log(JSON.stringify({
  rows: rows.length,
  parse_cpu: parseCpu,
  import_cpu: importCpu,
  import_wall: importWall,
  peak_mib: process.resourceUsage().maxRSS / 1024,
}));
