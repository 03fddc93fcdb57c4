"""History repair never rewrites what an earlier model call was sent, so cached prefixes hold."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from streaming.messages.history import repair_history

IDS = st.sampled_from(["t0", "t1", "t2", "t3"])
TEXT = st.sampled_from(["hi", " ", "", "\n\n", "answer"])
BLOCK = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, TEXT),
    st.builds(lambda i: {"type": "tool_use", "id": i, "name": "f", "input": {"a": 1}}, IDS),
    st.builds(lambda i: {"type": "tool_use", "id": i, "name": "f", "input": "bad"}, IDS),
    st.builds(lambda i: {"type": "tool_result", "tool_use_id": i, "content": "r"}, IDS),
    st.just({"type": "thinking", "thinking": "hm", "signature": "sig"}),
    st.just({"type": "thinking", "thinking": "hm", "signature": ""}),
    st.just({"type": "image", "source": {"type": "base64", "data": "AA=="}}),
)
MESSAGE = st.builds(
    lambda role, content: {"role": role, "content": content},
    st.sampled_from(["user", "assistant"]),
    st.one_of(TEXT, st.lists(BLOCK, max_size=4)),
)
# A turn as the engine runs it: tool rounds (the assistant's calls, maybe after whitespace
# text, then their results), then an answer unless the turn failed, then the next question.
TURN = st.tuples(st.lists(st.tuples(st.integers(1, 3), st.booleans()), max_size=2), st.booleans())


def question(k: int) -> dict[str, Any]:
    return {
        "role": "user",
        "content": f"question {k}" if k % 2 else [{"type": "text", "text": "q"}],
    }


def requests(stored: list[dict[str, Any]], turns: list[Any]) -> list[list[dict[str, Any]]]:
    """The history of every model call, built the way the runner and the store build it."""
    raw = [*stored, question(0)]
    history = repair_history(raw)
    out = [history]
    for t, (rounds, answered) in enumerate(turns):
        for r, (calls, whitespace) in enumerate(rounds):
            ids = [f"n{t}_{r}_{j}" for j in range(calls)]
            pre = [{"type": "text", "text": "\n"}] if whitespace else []
            uses = [{"type": "tool_use", "id": i, "name": "f", "input": {}} for i in ids]
            results = [{"type": "tool_result", "tool_use_id": i, "content": "ok"} for i in ids]
            step = [
                {"role": "assistant", "content": pre + uses},
                {"role": "user", "content": results},
            ]
            raw += step
            history = repair_history(history + step)  # the runner repairs its own history
            out.append(history)
        if answered:
            raw.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
        raw.append(question(t + 1))
        history = repair_history(raw)  # the next turn repairs the stored rows
        out.append(history)
    return out


def flat(messages: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """The blocks a prompt is made of, string content read as one text block like the API."""
    out = []
    for message in messages:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        out += [(message["role"], block) for block in blocks]
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(MESSAGE, max_size=8), st.lists(TURN, min_size=1, max_size=3))
def test_repair_keeps_every_block_an_earlier_call_was_sent(
    stored: list[dict[str, Any]], turns: list[Any]
) -> None:
    calls = requests(stored, turns)
    for before, after in itertools.pairwise(calls):
        assert flat(after)[: len(flat(before))] == flat(before)
    assert all(repair_history(history) == history for history in calls)
