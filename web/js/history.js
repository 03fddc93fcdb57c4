// A stored session as turns of synthetic events, so a reload renders through the very same
// code as a live stream. A session comes with its newest messages; earlier pages join it here.

/** `session` with `page` (the messages before its first, from its `earlier_cursor`) in front. */
export function withEarlier(session, page) {
  return { ...session, messages: [...page.messages, ...session.messages], earlier_cursor: page.earlier_cursor };
}

/**
 * Group a session's stored messages into turns: `{ turnId, userText, events: [[type, data]],
 * question, answer, waiting }`. `question`: the user message (id, parent_id, sibling_ids);
 * `answer`: its first reply's versions and the last reply's id; `waiting`: ids of tool calls
 * the turn made but got no result for (they waited for an approval, or were cut off);
 * `continued`: the next turn goes on from this one.
 * Discarded messages are skipped; blocks cut off mid-stream are shown as incomplete.
 */
export function storedTurns(messages) {
  const turns = [];
  const toolNames = new Map();
  let current = null;
  for (const message of messages) {
    if (message.status === 'discarded') continue;
    const question = message.role === 'user' && !hasToolResults(message.content);
    // A regenerated answer belongs to another turn than its question: it is still its answer.
    const adopt = current && current.question && !current.events.length && !question;
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
      current.events.push(...assistantEvents(message, toolNames));
    } else {
      for (const block of message.content || []) current.waiting.delete(block.tool_use_id);
      current.events.push(...resultEvents(message, toolNames));
    }
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

function assistantEvents(message, toolNames) {
  const id = message.id;
  const events = [['message_start', { message_id: id, role: 'assistant', model: message.model }]];
  const blocks = [
    ...(message.content || []).map((block) => [block, false]),
    ...(message.partial_content || []).map((block) => [block, true]),
  ];
  blocks.forEach(([block, incomplete], index) => {
    const blockId = `${id}.${index}`;
    const base = { message_id: id, block_id: blockId, index, type: block.type };
    if (block.id && block.name) toolNames.set(block.id, block.name);
    if (block.type === 'text') {
      const citations = block.citations || undefined;
      events.push(['block_start', { ...base, block: { type: 'text', text: '', citations } }]);
      events.push(['block_delta', { message_id: id, block_id: blockId, delta: { type: 'text_delta', text: block.text || '' } }]);
    } else if (block.type === 'thinking') {
      events.push(['block_start', { ...base, block: { type: 'thinking', thinking: '' } }]);
      events.push(['block_delta', { message_id: id, block_id: blockId, delta: { type: 'thinking_delta', thinking: block.thinking || '' } }]);
    } else {
      events.push(['block_start', { ...base, block: { ...block, input: {} } }]);
    }
    const end = { ...base, input: block.input, citations: block.citations, incomplete: incomplete || undefined };
    events.push(['block_end', end]);
  });
  events.push(['message_end', { message_id: id, stop_reason: message.stop_reason }]);
  return events;
}

function resultEvents(message, toolNames) {
  return (Array.isArray(message.content) ? message.content : [])
    .filter((block) => block.type === 'tool_result')
    .map((block) => [
      'tool_result',
      {
        message_id: message.id,
        tool_use_id: block.tool_use_id,
        name: toolNames.get(block.tool_use_id),
        is_error: Boolean(block.is_error),
        content: block.content,
        declined: block.declined,
      },
    ]);
}
