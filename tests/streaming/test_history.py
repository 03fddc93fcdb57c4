"""Tests for history validation and repair (streaming.messages.history)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streaming.messages.history import INTERRUPTED_RESULT, repair_history, validate_history

TRANSCRIPTS = Path(__file__).resolve().parents[2].parent / "shared" / "transcripts"
REQUESTS = TRANSCRIPTS / "anthropic-sdk-python-cassette__tool_loop_requests.json"

USER = {"role": "user", "content": "What is the weather in SF?"}
TOOL_USE = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "SF"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "68F"}
THINKING = {"type": "thinking", "thinking": "hmm", "signature": "sig"}


def asst(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def txt(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


VALID = [USER, asst(txt("Checking."), TOOL_USE), user(RESULT, txt("thanks"))]


def test_valid_history_accepted() -> None:
    assert validate_history(VALID) == []
    assert validate_history([USER]) == []
    assert validate_history([*VALID, asst(THINKING, txt("68F")), USER]) == []


def test_recorded_requests_accepted() -> None:
    requests = json.loads(REQUESTS.read_text())
    assert len(requests) == 2
    for request in requests:
        assert validate_history(request["messages"]) == []
        repaired = repair_history(request["messages"])
        assert validate_history(repaired) == []
        assert repaired == request["messages"]


BROKEN: list[tuple[str, list[dict[str, Any]], str]] = [
    ("empty history", [], "history is empty"),
    ("orphan tool_use at end", [USER, asst(TOOL_USE)], "orphan tool_use toolu_1"),
    ("orphan tool_use before text", [USER, asst(TOOL_USE), user(txt("hi"))], "orphan tool_use"),
    ("orphan before assistant", [USER, asst(TOOL_USE), asst(txt("x")), USER], "orphan tool_use"),
    ("tool_result after text", [USER, asst(TOOL_USE), user(txt("a"), RESULT)], "must come before"),
    ("unmatched tool_result", [USER, asst(txt("x")), user(RESULT)], "does not match"),
    ("tool_result in first", [user(RESULT)], "does not match"),
    ("two results for one id", [USER, asst(TOOL_USE), user(RESULT, RESULT)], "more than one"),
    ("empty text block", [USER, asst(txt(" \n"), TOOL_USE), user(RESULT)], "text block is empty"),
    ("empty string content", [{"role": "user", "content": ""}], "content is empty"),
    ("empty list content", [USER, asst(), USER], "empty list"),
    ("assistant first", [asst(txt("hi")), USER], "first message must have role 'user'"),
    ("two users", [USER, USER], "roles must alternate"),
    ("two assistants", [USER, asst(txt("a")), asst(txt("b")), USER], "roles must alternate"),
    ("bad role", [USER, {"role": "developer", "content": "x"}, USER], "role must be"),
    ("system first", [{"role": "system", "content": "x"}, USER], "first message must"),
    (
        "system between a call and its result",
        [USER, asst(TOOL_USE), {"role": "system", "content": "x"}, user(RESULT)],
        "between tool_use",
    ),
    (
        "duplicate tool_use ids",
        [*VALID, asst(TOOL_USE), user(RESULT)],
        "duplicate tool_use id toolu_1",
    ),
    ("tool input not a dict", [USER, asst({**TOOL_USE, "input": "{}"}), user(RESULT)], "input"),
    ("tool_use without id", [USER, asst({**TOOL_USE, "id": ""}), USER], "no id"),
    ("thinking without signature", [USER, asst({**THINKING, "signature": ""}), USER], "signature"),
    ("redacted without data", [USER, asst({"type": "redacted_thinking"}), USER], "data"),
    ("tool_use from user", [user(txt("a"), TOOL_USE)], "only allowed in assistant"),
    ("ends with assistant", [USER, asst(txt("hi"))], "last message must have role 'user'"),
    ("content not str or list", [{"role": "user", "content": None}], "string or a list"),
    ("block without type", [user({"text": "x"})], "string 'type'"),
]


@pytest.mark.parametrize(
    ("messages", "expected"), [(m, e) for _, m, e in BROKEN], ids=[n for n, _, _ in BROKEN]
)
def test_broken_history_rejected_and_repaired(messages: list[dict[str, Any]], expected: str):
    problems = validate_history(messages)
    assert any(expected in problem for problem in problems), problems
    before = copy.deepcopy(messages)
    repaired = repair_history(messages)
    assert messages == before, "input must not be mutated"
    assert repaired == [] or validate_history(repaired, expect_user_last=False) == []
    assert repair_history(repaired) == repaired


def test_final_assistant_tool_use_allowed_only_when_not_expecting_user() -> None:
    messages = [USER, asst(TOOL_USE)]
    assert validate_history(messages, expect_user_last=False) == []
    assert len(validate_history(messages)) == 2


def test_repair_adds_interrupted_result_for_orphans() -> None:
    other = {**TOOL_USE, "id": "toolu_2"}
    repaired = repair_history([USER, asst(TOOL_USE, other), user(txt("ok"), RESULT)])
    assert repaired[2]["content"] == [
        {
            "type": "tool_result",
            "tool_use_id": "toolu_2",
            "is_error": True,
            "content": INTERRUPTED_RESULT,
        },
        RESULT,
        txt("ok"),
    ]
    tail = repair_history([USER, asst(TOOL_USE)])
    assert tail[-1] == user(
        {
            "type": "tool_result",
            "tool_use_id": "toolu_1",
            "is_error": True,
            "content": INTERRUPTED_RESULT,
        }
    )
    assert validate_history(tail) == []


def test_repair_merges_and_drops() -> None:
    messages = [
        asst(txt("orphaned greeting")),
        USER,
        user(txt(" ")),
        asst({**THINKING, "signature": ""}, txt("")),
        asst(txt("one")),
        {"role": "assistant", "content": "two"},
        user(RESULT),
        asst(txt("three")),
    ]
    assert repair_history(messages) == [USER, asst(txt("one"), txt("two"), txt("three"))]


def test_repair_drops_duplicate_tool_use_and_its_results() -> None:
    messages = [*VALID, asst(txt("again"), TOOL_USE), user(RESULT, txt("more"))]
    repaired = repair_history(messages)
    assert repaired[:3] == VALID
    assert repaired[3:] == [asst(txt("again")), user(txt("more"))]


def test_repair_fixes_non_dict_tool_input() -> None:
    messages = [USER, asst({**TOOL_USE, "input": None}), user(RESULT)]
    repaired = repair_history(messages)
    assert repaired[1]["content"][0]["input"] == {}
    assert messages[1]["content"][0]["input"] is None


# --- property: repair always produces a valid history ----------------------------------

IDS = st.sampled_from(["toolu_a", "toolu_b", "toolu_c"])
TEXTS = st.sampled_from(["", " ", "\n", "hi", "ok then"])
BLOCKS = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, TEXTS),
    st.builds(
        lambda s: {"type": "thinking", "thinking": "x", "signature": s}, st.sampled_from(["", "s"])
    ),
    st.builds(lambda d: {"type": "redacted_thinking", "data": d}, st.sampled_from(["", "d"])),
    st.builds(lambda i: {"type": "tool_use", "id": i, "name": "f", "input": {}}, IDS),
    st.builds(lambda i: {"type": "tool_result", "tool_use_id": i, "content": "r"}, IDS),
    st.just({"type": "image", "source": {"type": "base64", "data": "AA"}}),
)
MESSAGES = st.lists(
    st.builds(
        lambda role, content: {"role": role, "content": content},
        st.sampled_from(["user", "assistant"]),
        st.one_of(TEXTS, st.lists(BLOCKS, max_size=4)),
    ),
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(MESSAGES)
def test_repair_output_always_validates(messages: list[dict[str, Any]]) -> None:
    before = copy.deepcopy(messages)
    repaired = repair_history(messages)
    assert messages == before
    has_user_text = any(
        m["role"] == "user"
        and (
            m["content"].strip()
            if isinstance(m["content"], str)
            else any(b["type"] == "text" and b["text"].strip() for b in m["content"])
        )
        for m in messages
    )
    if has_user_text:
        assert repaired
    if repaired:
        assert validate_history(repaired, expect_user_last=False) == []
        if repaired[-1]["role"] == "user":
            assert validate_history(repaired) == []
    assert repair_history(repaired) == repaired
