// The HTTP API client and the API token kept in this browser's storage.

const TOKEN_KEY = 'chat.token';

export class ApiError extends Error {
  constructor(status, code, message, details = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** The saved API token ('' when none). */
export function getToken() {
  return localStorage.getItem(TOKEN_KEY) || '';
}

export function setToken(token) {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

/**
 * Move a `#token=...` from the address bar into storage, so it is not left in history;
 * true when there was one (an open tab calls this again on `hashchange`).
 */
export function adoptTokenFromAddress() {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get('token');
  if (!token) return false;
  setToken(token.trim());
  history.replaceState(null, '', location.pathname + location.search);
  return true;
}

async function send(method, path, body) {
  const headers = { Authorization: `Bearer ${getToken()}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'network_error', 'The server cannot be reached.');
  }
  if (!response.ok) {
    const data = await response.json().catch(() => null);
    const error = (data && data.error) || {};
    throw new ApiError(
      response.status,
      error.code || `http_${response.status}`,
      error.message || response.statusText,
      error.details,
    );
  }
  return response;
}

async function request(method, path, body) {
  const response = await send(method, path, body);
  if (response.status === 204) return null;
  return response.json().catch(() => null);
}

/** Every page of a sessions listing (`query` adds e.g. `&q=`). */
async function allSessions(query = '') {
  const all = [];
  let cursor = null;
  do {
    const after = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = await request('GET', `/api/sessions?limit=100${query}${after}`);
    all.push(...page.sessions);
    cursor = page.next_cursor;
  } while (cursor);
  return all;
}

const path = (id) => encodeURIComponent(id);

// Where a cited source's records are (docs/api.md): one record by id, or the filtered list.
const SOURCE_PATHS = {
  txn: (id) => `/api/transactions/${path(id)}`,
  budget: (id) => `/api/budgets/${path(id)}`,
  account: (id) => `/api/accounts/${path(id)}`,
  txns: (query) => `/api/transactions?${new URLSearchParams(query)}`,
};

/** The API path of a cited source id (`txn:12`, `txns:category=Groceries&…`), or null. */
export function sourcePath(source) {
  const at = String(source).indexOf(':');
  const kind = String(source).slice(0, at);
  return at > 0 && Object.hasOwn(SOURCE_PATHS, kind) ? SOURCE_PATHS[kind](source.slice(at + 1)) : null;
}

export const api = {
  /** Every session, newest first: the API gives them a page of at most 100 at a time. */
  listSessions: () => allSessions(),
  /**
   * One page of the sessions whose title or messages hold `q`, each with its `match`, from
   * `cursor` on: `{ sessions, next_cursor, partial }` (see searchAll in sessions.js).
   */
  searchSessions: (q, cursor = null) =>
    request('GET', `/api/sessions?limit=100&q=${encodeURIComponent(q)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
  /** The page of a session's messages just before `before` (an `earlier_cursor`), with their events. */
  earlierMessages: (id, before) =>
    request('GET', `/api/sessions/${path(id)}/messages?limit=100&events=true&before=${encodeURIComponent(before)}`),
  renameSession: (id, title) => request('PATCH', `/api/sessions/${path(id)}`, { title }),
  /** The chat as a file: `{ blob, name }` from the server's Content-Disposition. */
  exportSession: async (id, format) => {
    const response = await send('GET', `/api/sessions/${path(id)}/export?format=${format}`);
    const disposition = response.headers.get('Content-Disposition') || '';
    const name = /filename="([^"]+)"/.exec(disposition)?.[1] || `chat.${format}`;
    return { blob: await response.blob(), name };
  },

  createSession: (title) => request('POST', '/api/sessions', { title }),
  /** A session; with `events`, each message carries the events that draw it (history.js). */
  getSession: (id, events = false) => request('GET', `/api/sessions/${path(id)}${events ? '?events=true' : ''}`),
  deleteSession: (id) => request('DELETE', `/api/sessions/${path(id)}`),
  /** Start a turn: `{ message, parent_id? }` (an edit) or `{ regenerate }`; queued if one runs. */
  startTurn: (sessionId, body) =>
    request('POST', `/api/sessions/${path(sessionId)}/turns`, { if_busy: 'queue', ...body }),
  /** Show the branch through `messageId`; returns the session as it now reads, with events. */
  switchBranch: (sessionId, messageId) =>
    request('PUT', `/api/sessions/${path(sessionId)}/active_leaf?events=true`, { message_id: messageId }),
  tools: () => request('GET', '/api/tools'),
  /** Apps connected over OAuth (/mcp), and the changes they asked for (connected-apps.js). */
  connectedApps: () => request('GET', '/api/connected-apps'),
  revokeApp: (id) => request('DELETE', `/api/connected-apps/${path(id)}`),
  connectorActions: () => request('GET', '/api/connector-actions'),
  decideAction: (id, body) => request('POST', `/api/connector-actions/${path(id)}`, body),
  getTurn: (id) => request('GET', `/api/turns/${path(id)}`),
  cancelTurn: (id) => request('POST', `/api/turns/${path(id)}/cancel`),
  /** The actions a turn asked to be approved, decided or not. */
  turnApprovals: async (id) => (await request('GET', `/api/turns/${path(id)}/approvals`)).approvals,
  decide: (turnId, body) => request('POST', `/api/turns/${path(turnId)}/approvals`, body),
  /** Correct what a transaction counts as (`transfer`, `not_transfer`, `refund`, `not_refund`). */
  markFlow: (id, mark) => request('PUT', `/api/transactions/${path(id)}/flow`, { mark }),
  /** Give a transaction back to the money rule. */
  unmarkFlow: (id) => request('DELETE', `/api/transactions/${path(id)}/flow`),
  /** The records behind a cited source (see sourcePath); a `txns:` list from `cursor` on. */
  source: async (source, cursor = null) => {
    const url = sourcePath(source);
    // A kind of source this page does not know has no record to show: say it is gone.
    if (url === null) throw new ApiError(404, 'not_found', 'Unknown source.');
    return request('GET', cursor ? `${url}&cursor=${encodeURIComponent(cursor)}` : url);
  },
};
