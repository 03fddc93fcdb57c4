// What stop reasons, turn statuses and error codes mean, in words a person reads.

export const DEMO_MODEL = 'offline demo model';

/** Questions the empty page offers (the offline demo model answers each of them). */
export const EXAMPLES = [
  'What did I spend on groceries last month?',
  'How am I doing against my budgets this month?',
  'Which recurring payments do I have?',
  'What are my account balances?',
];

const STOP_REASONS = {
  max_tokens: 'The answer was cut off: it reached the length limit.',
  refusal: 'The model declined to continue.',
  model_context_window_exceeded: 'The answer ran out of room in the model’s context window.',
  pause_turn: 'The model paused this answer.',
  stop_sequence: 'The answer stopped at a stop sequence.',
};

const STATUSES = {
  completed: null,
  continued: null,
  awaiting_approval: 'Waiting for your decision on the action above.',
  cancelled: 'Stopped. What was written before the stop is kept.',
  failed: 'This answer failed.',
  max_rounds: 'Stopped: the model used too many tool rounds for one answer.',
  interrupted: 'Interrupted: the server stopped while answering. Ask again to continue.',
};

const ERRORS = {
  max_tokens: 'The answer hit the length limit and was cut off.',
  refusal: 'The model declined to answer this.',
  model_context_window_exceeded: 'The answer ran out of room in the model’s context window. Ask again.',
  prompt_too_long: 'This question does not fit the model’s context window, even with earlier turns left out.',
  too_many_turns: 'Too many answers are being written for you at once. Wait for one to finish.',
  daily_token_limit: 'You have used today’s token budget. It renews at midnight UTC.',
  overloaded_error: 'The model is overloaded right now. Try again in a moment.',
  rate_limit_error: 'Too many requests to the model right now. Try again in a moment.',
  api_error: 'The model service had an internal error.',
  authentication_error: 'The server’s API key was rejected by the model service.',
  permission_error: 'The server’s API key may not use this model.',
  invalid_request_error: 'The model service rejected the request.',
  turn_in_progress: 'An answer is still being written in this chat. Wait for it or stop it.',
  unauthorized: 'The API token is not valid. Paste the token that `make run` printed.',
  token_expired: 'The link to this answer expired; reconnecting.',
  network_error: 'The server cannot be reached.',
  not_found: 'That chat no longer exists.',
  chat_not_found: 'Chat not found: none of your chats has that address. It may have been deleted.',
  already_decided: 'That action was already decided, in another tab perhaps.',
};

// Stop reasons the turn's own status or error already explains: one notice per cause.
const SAID_ELSEWHERE = new Set(['end_turn', 'tool_use', 'cancelled']);

/** Words for a message's stop reason, or null when it needs none here (see SAID_ELSEWHERE). */
export function stopReasonText(reason) {
  if (!reason || SAID_ELSEWHERE.has(reason)) return null;
  return STOP_REASONS[reason] || `The model stopped (${reason}).`;
}

/** Words for how a turn ended, or null for a normal completion. */
export function statusText(status) {
  if (status in STATUSES) return STATUSES[status];
  return `The answer ended: ${status}.`;
}

/** Words for an error code; the server's own message when the code is new to us. */
export function errorText(code, message) {
  return ERRORS[code] || message || `Something went wrong (${code}).`;
}

/** Words for context_trimmed: what the model no longer sees of this chat, or null. */
export function contextText(data) {
  const turns = Number(data.omitted_turns) || 0;
  const results = Number(data.elided_results) || 0;
  const what = [];
  if (turns) what.push(turns === 1 ? 'the first turn' : `the first ${turns} turns`);
  if (results) what.push(`${results} older tool ${results === 1 ? 'result' : 'results'} in full`);
  if (!what.length) return null;
  return `To fit its context window, the model no longer sees ${what.join(' or ')} of this chat. They stay here.`;
}
