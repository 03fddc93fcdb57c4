"""The typed constructors that hold logic: optional keys only when they apply, the wire's order."""

from __future__ import annotations

import json

import pytest

from streaming.aisdk import ui_chunks as C
from streaming.aisdk.ui_stream import encode_chunks
from streaming.wire import events as E


def test_turn_start_says_only_what_applies() -> None:
    assert E.turn_start("t", "s", "q") == (
        "turn_start",
        {"turn_id": "t", "session_id": "s", "user_message_id": "q"},
    )
    _, data = E.turn_start("t", "s", None, continues="p", replayed=True, reset=True)
    assert data == {
        "turn_id": "t",
        "session_id": "s",
        "user_message_id": None,
        "continues": "p",
        "replayed": True,
        "reset": True,
    }


def test_a_block_starts_with_its_call_and_ends_with_what_it_holds() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "calc", "input": {}}
    _, start = E.block_start("m", "m.0", 0, call)
    assert (start["type"], start["tool_use_id"], start["name"]) == ("tool_use", "toolu_1", "calc")
    assert "tool_use_id" not in E.block_start("m", "m.1", 1, {"type": "text", "text": ""})[1]
    thinking = {"type": "thinking", "thinking": "hm", "signature": "sig", "other": 1}
    assert E.block_end("m", "m.1", 1, thinking)[1] == {
        "message_id": "m",
        "block_id": "m.1",
        "index": 1,
        "type": "thinking",
        "signature": "sig",
    }
    _, cut = E.block_end("m", "m.0", 0, {"type": "tool_use"}, error="bad", incomplete=True)
    assert (cut["error"], cut["incomplete"]) == ("bad", True) and "input" not in cut


def test_message_end_and_tool_result_add_their_optional_keys_only_when_given() -> None:
    assert set(E.message_end("m", "end_turn", None)[1]) == {"message_id", "stop_reason", "usage"}
    _, cut = E.message_end(
        "m", "error", {}, context_management={"applied_edits": []}, incomplete=True
    )
    assert cut["context_management"] == {"applied_edits": []} and cut["incomplete"] is True
    block = {"type": "tool_result", "tool_use_id": "t1", "content": "no", "is_error": True}
    assert "declined" not in E.tool_result("r", block, "calc")[1]
    assert E.tool_result("r", {**block, "declined": {"reason": "x"}}, None)[1]["declined"] == {
        "reason": "x"
    }


def test_a_stored_status_the_contract_does_not_know_is_refused() -> None:
    assert E.turn_status("continued") == "continued"
    with pytest.raises(ValueError):
        E.turn_status("paused")


def test_tool_chunks_keep_the_wires_key_order() -> None:
    wire = encode_chunks(
        [
            C.tool_input_available("t1", "web_search", True, {"q": 1}),
            C.tool_input_error("t2", "calc", False, "cut"),
            C.reasoning_start("r", None),
            C.tool_approval_response("t3", False),
        ]
    )
    frames = [json.loads(f.removeprefix(b"data: ")) for f in wire.split(b"\n\n")[:-1]]
    assert [list(f) for f in frames] == [
        ["type", "toolCallId", "toolName", "providerExecuted", "input"],
        ["type", "toolCallId", "toolName", "input", "errorText"],
        ["type", "id"],
        ["type", "approvalId", "approved"],
    ]
    assert C.tool_approval_response("t3", True, "fine")["reason"] == "fine"
