// The statement import endpoints (docs/api.md "Statement imports"), errors as rest.js's ApiError.

import { ApiError, getToken } from './rest.js';

const path = (id) => encodeURIComponent(id);

async function call(method, url, body) {
  // Signed out, every call would be refused as an invalid token: ask to sign in instead.
  if (!getToken()) throw new ApiError(401, 'signed_out', 'Sign in first.');
  const headers = { Authorization: `Bearer ${getToken()}` };
  // A FormData body sets its own multipart Content-Type with the boundary.
  if (body !== undefined && !(body instanceof FormData)) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined || body instanceof FormData ? body : JSON.stringify(body),
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'network_error', 'The server cannot be reached.');
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const error = (data && data.error) || {};
    throw new ApiError(
      response.status,
      error.code || `http_${response.status}`,
      error.message || response.statusText,
      error.details || {},
    );
  }
  return data;
}

const query = (params) => {
  const kept = Object.entries(params).filter(([, v]) => v != null && v !== '');
  return kept.length ? `?${new URLSearchParams(kept)}` : '';
};

export const importApi = {
  /** Upload a statement: `fields` are the form's other fields (account_id, mapping, ...). */
  upload: (file, fields = {}) => {
    const form = new FormData();
    form.append('file', file, file.name);
    for (const [key, value] of Object.entries(fields)) {
      if (value != null && value !== '') form.append(key, value);
    }
    return call('POST', '/api/imports', form);
  },
  list: (cursor = null, limit = 20) => call('GET', `/api/imports${query({ limit, cursor })}`),
  show: (id) => call('GET', `/api/imports/${path(id)}`),
  /** A page of an import's rows, of one `status` or all. */
  rows: (id, cursor = null, status = null) =>
    call('GET', `/api/imports/${path(id)}/rows${query({ limit: 50, cursor, status })}`),
  editRow: (id, rowId, change) => call('PATCH', `/api/imports/${path(id)}/rows/${path(rowId)}`, change),
  commit: (id) => call('POST', `/api/imports/${path(id)}/commit`),
  undo: (id) => call('DELETE', `/api/imports/${path(id)}`),
  accounts: async () => (await call('GET', '/api/accounts')).accounts,
  categories: async () => (await call('GET', '/api/categories')).categories,
};

const SIGN_IN = 'Sign in first: open the signed-in link that “make run” printed, or paste its API token.';
const WHERE = ['line', 'column', 'element', 'field', 'byte'];

/** An import error in words: the server's message, then where in the file, if it says. */
export function importErrorText(err) {
  if (err.code === 'network_error') return 'The server cannot be reached. Try again.';
  if (err.code === 'signed_out') return SIGN_IN;
  if (err.code === 'unauthorized') return 'The API token is not valid. Sign in again.';
  const details = err.details || {};
  const where = WHERE.filter((key) => details[key] != null).map((key) => `${key} ${details[key]}`);
  const fields = Object.entries(details)
    .filter(([key]) => !WHERE.includes(key))
    .map(([key, value]) => [key, Array.isArray(value) ? value.join(' ') : value])
    .filter(([, value]) => typeof value === 'string' && value && value !== err.message)
    .map(([key, value]) => `${key}: ${value}`);
  const extra = [...where, ...fields].join('; ');
  return extra ? `${err.message} (${extra})` : err.message;
}
