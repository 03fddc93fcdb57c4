// A stored session as turns of events, so a reload renders through the very same code as a
// live stream. The server derives each message's events (`?events=true`: the ones its stream
// ended with); this only groups them into turns. A session comes with its newest messages;
// earlier pages join it here.

/** `session` with `page` (the messages before its first, from its `earlier_cursor`) in front. */
export function withEarlier(session, page) {
  return { ...session, messages: [...page.messages, ...session.messages], earlier_cursor: page.earlier_cursor };
}

/**
 * Group a session's stored messages (read with their `events`) into turns: `{ turnId,
 * userText, events: [[type, data]], question, answer, waiting }`. `question`: the user
 * message (id, parent_id, sibling_ids); `answer`: its first reply's versions and the last
 * reply's id; `waiting`: ids of tool calls the turn made but got no result for (they waited
 * for an approval, or were cut off); `continued`: the next turn goes on from this one.
 * Discarded messages are skipped.
 */
export function storedTurns(messages) {
  const turns = [];
  let current = null;
  for (const message of messages) {
    if (message.status === 'discarded') continue;
    const question = message.role === 'user' && !hasToolResults(message.content);
    // A regenerated answer belongs to another turn than its question: it is still its answer.
    const adopt = current && current.question && !current.answer && !question;
    if (adopt) current.turnId = message.turn_id || current.turnId;
    else if (question || !current || (message.turn_id && message.turn_id !== current.turnId)) {
      // A turn that starts with tool results goes on from one that waited for an approval.
      if (current && !question) current.continued = true;
      current = {
        turnId: message.turn_id,
        userText: question ? textOf(message.content) : null,
        events: [],
        question: question ? versions(message) : null,
        answer: null,
        waiting: new Set(),
      };
      turns.push(current);
      if (question) continue;
    }
    if (message.role === 'assistant') {
      current.answer = { ...(current.answer || versions(message)), last: message.id };
      for (const block of message.content || []) if (block.type === 'tool_use') current.waiting.add(block.id);
    } else {
      for (const block of message.content || []) current.waiting.delete(block.tool_use_id);
    }
    current.events.push(...(message.events || []));
  }
  return turns;
}

function versions(message) {
  return { id: message.id, parent_id: message.parent_id, sibling_ids: message.sibling_ids || [message.id] };
}

function hasToolResults(content) {
  return Array.isArray(content) && content.some((b) => b.type === 'tool_result');
}

function textOf(content) {
  if (typeof content === 'string') return content;
  return (content || []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
}
