"""The binding check every double shares (demo_model/binding.py), held to what the docs say.

"Prefix checks on thinking blocks": a block fails if `system`, `tools` or an earlier message
changed after it was written, or a thinking block between others was left out or moved; the
400's words and `drop_block` are those of "Fix a thinking block bound to a different
conversation"; markers (`cache_control`) are not content.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from demo_model.binding import BINDING_BETA, Refused, bound_message, check, sign_reply

MODEL = "claude-sonnet-5-5"
TOOLS = [{"name": "get_transactions", "input_schema": {"type": "object"}}]


def thinking(text: str = "") -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": ""}


def call(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": "get_transactions", "input": {}}


def result(tool_id: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_id, "content": "[]"}


def conversation() -> dict[str, Any]:
    """Two replies, each signed as the API would sign it for the request before it."""
    body: dict[str, Any] = {
        "model": MODEL,
        "system": [{"type": "text", "text": "You help."}],
        "tools": TOOLS,
        "messages": [
            {"role": "user", "content": "Groceries?"},
            {"role": "system", "content": [{"type": "text", "text": "Today is 2026-11-29."}]},
        ],
    }
    first = sign_reply(body, [thinking(), thinking("Looking up transactions."), call("t1")])
    body["messages"] += [
        {"role": "assistant", "content": first},
        {"role": "user", "content": [result("t1")]},
    ]
    second = sign_reply(body, [thinking("Read 1 result."), call("t2")])
    body["messages"] += [
        {"role": "assistant", "content": second},
        {"role": "user", "content": [result("t2")]},
    ]
    return body


def test_a_conversation_sent_as_it_was_passes_markers_and_all() -> None:
    body = conversation()
    assert check(body, set()).messages == body["messages"]
    marked = copy.deepcopy(body)
    marked["system"][0]["cache_control"] = {"type": "ephemeral"}
    marked["messages"][3]["content"][0]["cache_control"] = {"type": "ephemeral"}
    assert check(marked, set()).transformations == []


def edited_system(body: dict[str, Any]) -> None:
    body["system"][0]["text"] = "You help. Today is 2026-11-30."


def edited_tools(body: dict[str, Any]) -> None:
    body["tools"] = [*TOOLS, {"name": "save_note", "input_schema": {"type": "object"}}]


def edited_result(body: dict[str, Any]) -> None:
    body["messages"][3]["content"][0]["content"] = "[result omitted to fit the window]"


def dropped_note(body: dict[str, Any]) -> None:
    del body["messages"][1]


def left_out_empty_thinking(body: dict[str, Any]) -> None:
    del body["messages"][2]["content"][0]


def changed_question(body: dict[str, Any]) -> None:
    body["messages"][0]["content"] = "Groceries last month?"


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (edited_system, "messages.2.content.0"),
        (edited_tools, "messages.2.content.0"),
        (changed_question, "messages.2.content.0"),
        (dropped_note, "messages.1.content.0"),
        (left_out_empty_thinking, "messages.2.content.0"),
        (edited_result, "messages.4.content.0"),
    ],
)
def test_any_change_before_a_block_is_refused_with_the_documented_400(
    change: Any, path: str
) -> None:
    body = conversation()
    change(body)
    with pytest.raises(Refused) as refused:
        check(body, set())
    assert refused.value.message == bound_message(path)
    assert refused.value.body()["error"]["type"] == "invalid_request_error"
    # The same history sent again fails again.
    with pytest.raises(Refused):
        check(body, set())


def test_drop_block_drops_the_failing_turns_thinking_and_reports_it() -> None:
    body = conversation()
    edited_system(body)
    body["thinking"] = {
        "type": "adaptive",
        "block_binding": {"prefix_mismatch_behavior": "drop_block"},
    }
    with pytest.raises(Refused, match=BINDING_BETA):
        check(body, set())
    checked = check(body, {BINDING_BETA})
    assert checked.reported
    assert checked.transformations == [
        {
            "type": "thinking_dropped",
            "path": "messages.2.content.0",
            "reason": "prefix_binding_mismatch",
        },
        {
            "type": "thinking_dropped",
            "path": "messages.2.content.1",
            "reason": "prefix_binding_mismatch",
        },
        {
            "type": "thinking_dropped",
            "path": "messages.4.content.0",
            "reason": "prefix_binding_mismatch",
        },
    ]
    kinds = [
        [b["type"] for b in m["content"]] for m in checked.messages if m["role"] == "assistant"
    ]
    assert kinds == [["tool_use"], ["tool_use"]]


def test_another_models_blocks_are_dropped_silently() -> None:
    body = conversation()
    body["model"] = "claude-opus-5-5"
    checked = check(body, set())
    assert not checked.reported
    assert {t["reason"] for t in checked.transformations} == {"model_binding_mismatch"}


def test_a_tampered_block_is_refused_as_an_invalid_signature() -> None:
    body = conversation()
    body["messages"][2]["content"][1]["thinking"] = "Something else."
    with pytest.raises(Refused, match=r"Invalid `signature` in `thinking` block\.$"):
        check(body, set())
