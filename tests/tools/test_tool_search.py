"""Many tools: MCP tools deferred behind the API's tool search; the demo model searches too."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from config import Timings
from demo_model.brain import respond
from models.db import Database
from tests.engine.streams import answer, message_end, message_start
from tests.tools.engine_turns import ToolsModel, deps_for, run_turn
from tests.tools.mcp_fixtures import calls, running_hub, stdio_spec, write_config
from tools import default_registry
from tools.search import TOOL_SEARCH, searchable

TIMINGS = Timings().scaled(0.05)
NAME = "mcp__many__extra_042"


def test_past_the_threshold_the_deferrable_tools_wait_behind_tool_search() -> None:
    ours = [{"name": f"t{i}"} for i in range(3)]
    theirs = [{"name": f"m{i}"} for i in range(3)]
    assert searchable(ours, theirs, 6) == [*ours, *theirs]
    assert searchable(ours, theirs, 0) == [*ours, *theirs]
    sent = searchable(ours, theirs, 5)
    assert sent[0] == TOOL_SEARCH and sent[1:4] == ours
    assert all(t["defer_loading"] is True for t in sent[4:])


def searching_reply(found: str) -> list[dict[str, Any]]:
    """A reply in which the API searched the tools, found `found`, and the model calls it."""
    server = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25"}
    result = {
        "type": "tool_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": {
            "type": "tool_search_tool_search_result",
            "tool_references": [{"type": "tool_reference", "tool_name": found}],
        },
    }
    call = {"type": "tool_use", "id": "toolu_x", "name": found, "input": {}}
    events: list[dict[str, Any]] = [message_start("msg_s")]
    for index, (start, partial) in enumerate(
        [({**server, "input": {}}, '{"query": "extra 42"}'), (result, None), (call, "{}")]
    ):
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        if partial is not None:
            delta = {"type": "input_json_delta", "partial_json": partial}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    return events + message_end("tool_use", 20)


def test_a_turn_finds_a_deferred_mcp_tool_and_runs_it(
    db: Database, user: tuple[int, str], tmp_path: Path
) -> None:
    count_file = tmp_path / "calls.txt"
    spec = stdio_spec(count_file, env={"TOOL_COUNT": "100"}, readOnlyTools=["extra_042"])
    config = write_config(tmp_path / "mcp.json", {"many": spec})
    model = ToolsModel([searching_reply(NAME), answer("Done.")])

    async def main() -> str:
        async with running_hub(config, TIMINGS) as hub:
            with ThreadPoolExecutor(4) as pool:
                deps = deps_for(db, pool, model, default_registry(), TIMINGS, hub=hub)
                deps = replace(deps, tool_search_threshold=30)
                status, _, _ = await run_turn(deps, user[0], "use extra 42")
                return status

    assert asyncio.run(main()) == "completed"
    assert calls(count_file) == []  # extra tools count nothing; the result says it ran
    sent = model.tools[0]
    assert TOOL_SEARCH in sent  # the conversation's copy: the list canonical, sorted by name
    deferred = [t["name"] for t in sent if t.get("defer_loading")]
    assert len(deferred) > 100 - 1 and all(n.startswith("mcp__") for n in deferred)
    assert not any(t.get("defer_loading") for t in sent if t["name"] == "get_transactions")
    assert model.tools[0] is model.tools[1]  # one list: the prompt cache holds
    history = model.requests[1]
    kinds = [b["type"] for b in history[-2]["content"]]
    assert kinds == ["server_tool_use", "tool_search_tool_result", "tool_use"]
    [result] = [b for b in history[-1]["content"] if b["type"] == "tool_result"]
    assert result["content"][0]["text"] == "tool 42"


def test_the_demo_model_searches_for_a_deferred_tool_it_needs() -> None:
    tools = [
        TOOL_SEARCH,
        {"name": "get_account_balances", "input_schema": {}, "defer_loading": True},
    ]
    question = {"role": "user", "content": "What are my account balances?"}
    reply = respond({"messages": [question], "tools": tools})
    kinds = [b["type"] for b in reply.blocks]
    assert kinds[-3:] == ["server_tool_use", "tool_search_tool_result", "tool_use"]
    refs = reply.blocks[-2]["content"]["tool_references"]
    assert refs == [{"type": "tool_reference", "tool_name": "get_account_balances"}]
    # Without the search tool a deferred tool is out of reach.
    hidden = respond({"messages": [question], "tools": tools[1:]})
    assert all(b["type"] == "text" for b in hidden.blocks)


def test_the_demo_model_streams_its_tool_search_as_the_api_does() -> None:
    import random

    from demo_model.wire import encode_reply
    from streaming.messages.accumulator import MessageAccumulator
    from streaming.wire.sse import SSEDecoder

    tools = [TOOL_SEARCH, {"name": "get_account_balances", "defer_loading": True}]
    question = {"role": "user", "content": "What are my account balances?"}
    reply = respond({"messages": [question], "tools": tools})
    raw = b"".join(encode_reply("msg_d", "demo", reply.blocks, "tool_use", 5, random.Random(1)))
    acc = MessageAccumulator()
    for event in SSEDecoder().feed(raw):
        acc.feed(json.loads(event.data))
    assert acc.message()["content"][-3:] == reply.blocks[-3:]
