// Amounts as the answers write them: thousands separators, the currency code after, and money
// out with a minus sign (and the `negative` class's colour), everywhere on the page.

const DECIMAL = /^\s*([-+−]?)(\d+)(?:\.(\d+))?\s*$/;

/** True when `text` is a tool's decimal amount string ("-1850.00", "42"). */
export function isAmount(text) {
  return typeof text === 'string' && DECIMAL.test(text);
}

/** "-1850.00", "USD" -> "−1,850.00 USD" in the page's locale; other text as it is. */
export function formatAmount(value, currency = '') {
  const text = String(value ?? '');
  const match = DECIMAL.exec(text);
  if (!match) return `${text} ${currency || ''}`.trim();
  const [, sign, whole, cents = ''] = match;
  const format = new Intl.NumberFormat(undefined, {
    minimumFractionDigits: cents.length,
    maximumFractionDigits: cents.length,
  });
  const digits = format.format(Number(`${whole}.${cents || '0'}`));
  const minus = sign === '-' || sign === '−' ? '−' : '';
  return `${minus}${digits} ${currency || ''}`.trim();
}

/** True when the amount is money out (it has a minus sign). */
export function isNegative(value) {
  return /^\s*[-−]/.test(String(value ?? ''));
}
