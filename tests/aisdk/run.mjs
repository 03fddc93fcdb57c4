// Drives the server's AI SDK endpoints with the real `ai` package and prints JSON:
// {final, user, chunkTypes, resumedTypes}. Usage: node run.mjs <scenario>
// with BASE_URL, TOKEN and CHAT_ID (and optionally AI_PACKAGE) in the environment. Scenarios:
//   send      one message, read to the end (multi-round tools, upstream faults)
//   resume    drop the connection mid-turn, resume from the step the client holds
//   snapshot  drop, GET the stored UIMessages of the running turn, resume from them
//   cancel    ask the server to cancel mid-turn, read the same stream to its end
//   chat-drop    useChat's engine (AbstractChat): the network drops mid-turn, and the page
//                resumes from the message onFinish reported with isDisconnect
//   chat-reload  the network drops, the page reloads from the stored UIMessages and
//                resumes without a position (the whole running turn is replayed)
//   branches     useChat: regenerate() the answer, then sendMessage({text, messageId}) edits
//                the question; prints the stored messages after each
//   approve      useChat with sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses;
//                addToolApprovalResponse({approved: APPROVED === '1', reason}) sends the follow-up,
//                then a second Chat (another tab) sends the same follow-up again
// AI_PACKAGE: the entry of another install of `ai` (v6/ for the previous major); else ours.
const {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  readUIMessageStream,
} = await import(process.env.AI_PACKAGE ?? 'ai');

const [scenario] = process.argv.slice(2);
const { BASE_URL, TOKEN, CHAT_ID } = process.env;
const QUESTION = process.env.QUESTION ?? 'What did I spend on groceries last month?';
const CUT = Number(process.env.CUT ?? 20);
const auth = { Authorization: `Bearer ${TOKEN}` };

const transport = new DefaultChatTransport({
  api: `${BASE_URL}/api/ui/chat`,
  headers: auth,
});

const user = {
  id: `user-${Date.now()}`,
  role: 'user',
  parts: [{ type: 'text', text: QUESTION }],
};

// Tee a chunk stream: one branch for readUIMessageStream, one to record chunk types.
function recorded(stream, types) {
  const [forMessages, forTypes] = stream.tee();
  (async () => {
    for await (const chunk of forTypes) types.push(chunk.type);
  })().catch(() => {});
  return forMessages;
}

// Read UIMessage snapshots until the stream ends, or stop after `limit` of them.
async function read(stream, { message, limit = Infinity } = {}) {
  let last = message;
  let seen = 0;
  const errors = [];
  const messages = readUIMessageStream({
    message,
    stream,
    onError: error => errors.push(String(error?.message ?? error)),
  });
  for await (const snapshot of messages) {
    last = snapshot;
    if (++seen >= limit) break;
  }
  return { last, errors, complete: seen < limit };
}

function steps(message) {
  return message.parts.filter(part => part.type === 'step-start').length;
}

async function send(abortSignal) {
  return transport.sendMessages({
    chatId: CHAT_ID,
    messages: [user],
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal,
  });
}

// A ChatState like the framework bindings keep: arrays replaced, snapshots cloned.
class State {
  constructor(messages = []) {
    Object.assign(this, { messages, status: 'ready', error: undefined });
  }
  pushMessage = message => (this.messages = [...this.messages, message]);
  popMessage = () => (this.messages = this.messages.slice(0, -1));
  replaceMessage = (index, message) => {
    this.messages = this.messages.map((m, i) => (i === index ? this.snapshot(message) : m));
  };
  snapshot = thing => structuredClone(thing);
}

class Chat extends AbstractChat {
  constructor(init, messages) {
    super({ ...init, state: new State(messages) });
  }
}

// A fetch whose first POST response body breaks after `cut` SSE frames, as a lost network
// does in a browser (a TypeError that names the network).
function breakingFetch(cut) {
  let broken = false;
  return async (url, init) => {
    const response = await fetch(url, init);
    if (broken || init?.method !== 'POST') return response;
    broken = true;
    const reader = response.body.getReader();
    let frames = 0;
    const body = new ReadableStream({
      async pull(controller) {
        if (frames >= cut) {
          await reader.cancel();
          controller.error(new TypeError('network error'));
          return;
        }
        const { done, value } = await reader.read();
        if (done) return controller.close();
        frames += new TextDecoder().decode(value).split('\n\n').length - 1;
        controller.enqueue(value);
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

async function chatScenario(out) {
  let disconnected;
  const init = {
    id: CHAT_ID,
    transport: new DefaultChatTransport({
      api: `${BASE_URL}/api/ui/chat`,
      headers: auth,
      fetch: breakingFetch(CUT),
    }),
    onFinish: ({ message, isDisconnect }) => {
      disconnected = isDisconnect ? message : undefined;
    },
  };
  const chat = new Chat(init);
  await chat.sendMessage({ text: QUESTION });
  out.disconnected = disconnected !== undefined;
  if (scenario === 'chat-drop') {
    await chat.resumeStream({
      headers: {
        'X-Resume-Message-Id': disconnected.id,
        'X-Resume-Steps': String(steps(disconnected)),
      },
    });
    out.messages = chat.messages;
  } else {
    const response = await fetch(`${BASE_URL}/api/ui/chat/${CHAT_ID}/messages`, {
      headers: auth,
    });
    const reloaded = new Chat(init, (await response.json()).messages);
    await reloaded.resumeStream();
    out.messages = reloaded.messages;
  }
  out.status = chat.status;
}

async function storedMessages() {
  const response = await fetch(`${BASE_URL}/api/ui/chat/${CHAT_ID}/messages`, { headers: auth });
  return (await response.json()).messages;
}

async function branchesScenario(out) {
  const chat = new Chat({ id: CHAT_ID, transport });
  await chat.sendMessage({ text: QUESTION });
  const first = chat.messages.at(-1);
  await chat.regenerate({ messageId: first.id });
  out.firstAnswer = first.id;
  out.afterRegenerate = { client: chat.messages, stored: await storedMessages() };
  const question = chat.messages[0];
  await chat.sendMessage({ text: 'Which subscriptions am I paying for?', messageId: question.id });
  out.afterEdit = { client: chat.messages, stored: await storedMessages() };
  out.status = chat.status;
}

// Wait until the answer is completed and the chat has read its stream to the end:
// the metadata arrives with the finish chunk, a moment before the status is ready.
async function settled(chat) {
  for (let i = 0; i < 400; i++) {
    if (chat.status === 'ready' && chat.messages.at(-1).metadata?.status === 'completed') return;
    await new Promise(resolve => setTimeout(resolve, 25));
  }
}

async function approveScenario(out) {
  const init = {
    id: CHAT_ID,
    transport,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  };
  const chat = new Chat(init);
  await chat.sendMessage({ text: QUESTION });
  const asked = structuredClone(chat.messages.at(-1));
  const part = asked.parts.find(p => p.state === 'approval-requested');
  out.asked = asked;
  await chat.addToolApprovalResponse({
    id: part.approval.id,
    approved: process.env.APPROVED === '1',
    reason: process.env.REASON,
  });
  // The automatic follow-up runs in the background: wait for it to end.
  await settled(chat);
  out.messages = chat.messages;
  out.status = chat.status;
  // Another tab holding the same answer sends the same decision: nothing runs twice.
  const other = new Chat(init, structuredClone(out.messages.slice(0, 1).concat([asked])));
  await other.addToolApprovalResponse({
    id: part.approval.id,
    approved: process.env.APPROVED === '1',
    reason: process.env.REASON,
  });
  await settled(other);
  out.otherTab = other.messages;
  out.stored = await storedMessages();
}

async function main() {
  const chunkTypes = [];
  const resumedTypes = [];
  const out = { user, chunkTypes, resumedTypes };
  if (scenario === 'send') {
    const result = await read(recorded(await send(), chunkTypes));
    Object.assign(out, { final: result.last, errors: result.errors });
  } else if (scenario === 'resume' || scenario === 'snapshot') {
    const controller = new AbortController();
    const stream = recorded(await send(controller.signal), chunkTypes);
    const first = await read(stream, { limit: CUT });
    controller.abort(); // the connection drops; the turn runs on
    let held = first.last;
    let headers = {
      'X-Resume-Message-Id': held.id,
      'X-Resume-Steps': String(steps(held)),
    };
    if (scenario === 'snapshot') {
      const response = await fetch(`${BASE_URL}/api/ui/chat/${CHAT_ID}/messages`, {
        headers: auth,
      });
      const data = await response.json();
      held = data.messages.at(-1);
      headers = data.resume_headers ?? {};
      out.snapshotRunning = data.running_turn_id !== null;
    }
    const again = await transport.reconnectToStream({ chatId: CHAT_ID, headers });
    if (again === null) throw new Error('the server said nothing runs (204)');
    const result = await read(recorded(again, resumedTypes), { message: held });
    Object.assign(out, { held, final: result.last, errors: result.errors });
  } else if (scenario === 'cancel') {
    const stream = recorded(await send(), chunkTypes);
    let cancelled = false;
    let last;
    for await (const snapshot of readUIMessageStream({ stream })) {
      last = snapshot;
      const text = snapshot.parts.some(p => p.type === 'reasoning' && p.text);
      if (!cancelled && text) {
        cancelled = true;
        const response = await fetch(`${BASE_URL}/api/ui/chat/${CHAT_ID}/cancel`, {
          method: 'POST',
          headers: auth,
        });
        out.cancelStatus = response.status;
      }
    }
    out.final = last;
  } else if (scenario === 'branches') {
    await branchesScenario(out);
  } else if (scenario === 'approve') {
    await approveScenario(out);
  } else if (scenario.startsWith('chat-')) {
    await chatScenario(out);
  } else {
    throw new Error(`unknown scenario ${scenario}`);
  }
  await new Promise(resolve => setTimeout(resolve, 50)); // let the type recorders drain
  process.stdout.write(JSON.stringify(out));
}

main().catch(error => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
