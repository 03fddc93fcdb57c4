"""MCP servers as tool sources, through real turns: approval, read-only, timeouts, outages."""

from __future__ import annotations

import asyncio
import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from config import Timings
from engine.store.approvals import ApprovalStore
from engine.store.messages import MessageStore
from engine.store.turns import TurnStore
from engine.store.workers import WorkerRegistry
from engine.turns.tools import ToolCall
from engine.turns.turn import Turn
from models import ToolRun
from models.db import Database
from services.sessions import create_session
from tests.engine.conftest import run_to_end
from tests.engine.streams import answer, tool_use
from tests.tools.engine_turns import ToolsModel, deps_for, run_turn
from tests.tools.mcp_fixtures import (
    calls,
    http_server,
    running_hub,
    stdio_spec,
    write_config,
)
from tests.waits import wait_until_async
from tools import default_registry
from tools.mcp_servers.config import McpConfigError, load_config, qualified

TIMINGS = Timings().scaled(0.05)  # an MCP call may take 1.5 s


def results(model: ToolsModel, request: int) -> list[dict[str, Any]]:
    return [b for b in model.requests[request][-1]["content"] if b["type"] == "tool_result"]


def run_with_hub(
    db: Database,
    config: str,
    model: ToolsModel,
    user_id: int,
    body: Any = None,
    timings: Timings = TIMINGS,
) -> Any:
    """Run `body(deps, hub)` (default: one turn) with a hub on the turn's loop."""

    async def main() -> Any:
        async with running_hub(config, timings) as hub:
            with ThreadPoolExecutor(4) as pool:
                deps = deps_for(db, pool, model, default_registry(), timings, hub=hub)
                if body is not None:
                    return await body(deps, hub)
                return await run_turn(deps, user_id, "look it up")

    return asyncio.run(main())


@pytest.fixture
def count_file(tmp_path: Path) -> Path:
    return tmp_path / "calls.txt"


@pytest.fixture
def stdio_config(tmp_path: Path, count_file: Path) -> str:
    spec = stdio_spec(count_file, readOnlyTools=["lookup"], idempotentTools=["slow"])
    return write_config(tmp_path / "mcp.json", {"counting": spec})


LOOKUP = "mcp__counting__lookup"


def test_a_read_only_tool_over_stdio_runs_once_and_the_turn_answers(
    db: Database, user: tuple[int, str], stdio_config: str, count_file: Path
) -> None:
    model = ToolsModel([tool_use("toolu_1", LOOKUP, ['{"key": "k"}']), answer("Found it.")])
    status, _, _ = run_with_hub(db, stdio_config, model, user[0])
    assert status == "completed"
    assert calls(count_file) == ["lookup"]
    [result] = results(model, 1)
    assert result["content"][0]["text"] == "value of k" and not result.get("is_error")
    sent = {t["name"]: t for t in model.tools[0]}
    assert sent[LOOKUP]["input_schema"]["required"] == ["key"]  # passed through
    assert "get_transactions" in sent


def test_over_streamable_http_too(
    db: Database, user: tuple[int, str], tmp_path: Path, count_file: Path
) -> None:
    with http_server(count_file) as (url, _):
        spec = {"url": url, "headers": {"X-Test": "1"}, "readOnlyTools": ["lookup"]}
        config = write_config(tmp_path / "mcp.json", {"web": spec})
        model = ToolsModel(
            [tool_use("toolu_1", "mcp__web__lookup", ['{"key": "h"}']), answer("ok")]
        )
        status, _, _ = run_with_hub(db, config, model, user[0])
    assert status == "completed"
    assert calls(count_file) == ["lookup"]
    assert results(model, 1)[0]["content"][0]["text"] == "value of h"


def test_an_unmarked_tool_waits_for_approval_whatever_its_annotations_say(
    db: Database, user: tuple[int, str], stdio_config: str, count_file: Path
) -> None:
    name = "mcp__counting__transfer"
    model = ToolsModel([tool_use("toolu_t", name, ['{"amount": 5}'])])
    status, events, _ = run_with_hub(db, stdio_config, model, user[0])
    assert status == "awaiting_approval"
    assert calls(count_file) == []
    [request] = [d for _, t, d in events if t == "approval_requested"]
    preview = request["preview"]
    assert preview["input"] == {"amount": 5}
    assert preview["annotations"]["readOnlyHint"] is True  # shown, not trusted
    assert preview["target"] == {"type": "mcp", "server": "counting", "tool": "transfer"}


def paused_then(
    db: Database, user_id: int, config: str, decide: Any, after: list[Any]
) -> tuple[ToolsModel, list[Any]]:
    """Pause a turn on a transfer call, `decide` it, run what started; return the model."""
    name = "mcp__counting__transfer"
    model = ToolsModel([tool_use("toolu_t", name, ['{"amount": 5}']), *after])

    async def body(deps: Any, hub: Any) -> list[Any]:
        status, _, new = await run_turn(deps, user_id, "move it")
        assert status == "awaiting_approval"
        started = await asyncio.to_thread(decide, new.turn_id)
        out = []
        for run in started:
            deps.events.open(run.turn.turn_id)
            turn = Turn(deps, run.turn, run.user_id, run.lease)
            out.append(await run_to_end(turn, deps, run.turn))
        return out

    return model, run_with_hub(db, config, model, user_id, body)


def test_approved_twice_at_once_it_runs_once(
    db: Database, user: tuple[int, str], stdio_config: str, count_file: Path
) -> None:
    approvals = ApprovalStore(db)

    def decide(turn_id: str) -> list[Any]:
        with ThreadPoolExecutor(2) as both:
            decisions = list(
                both.map(
                    lambda _: approvals.decide(user[0], turn_id, "toolu_t", True, None, None),
                    range(2),
                )
            )
        return [run for d in decisions for run in d.started]

    model, ended = paused_then(db, user[0], stdio_config, decide, [answer("Moved.")])
    assert [status for status, _ in ended] == ["completed"]
    assert calls(count_file) == ["transfer"]
    assert results(model, 1)[0]["content"][0]["text"] == "moved 5"


def test_declined_it_never_runs(
    db: Database, user: tuple[int, str], stdio_config: str, count_file: Path
) -> None:
    approvals = ApprovalStore(db)

    def decide(turn_id: str) -> list[Any]:
        return approvals.decide(user[0], turn_id, "toolu_t", False, "no", None).started

    model, ended = paused_then(db, user[0], stdio_config, decide, [answer("Not moved.")])
    assert [status for status, _ in ended] == ["completed"]
    assert calls(count_file) == []
    assert results(model, 1)[0]["is_error"] is True


def test_a_slow_call_times_out_as_an_error_naming_the_server(
    db: Database, user: tuple[int, str], tmp_path: Path, count_file: Path
) -> None:
    spec = stdio_spec(count_file, readOnlyTools=["slow"])
    config = write_config(tmp_path / "mcp.json", {"counting": spec})
    slow = tool_use("toolu_s", "mcp__counting__slow", ['{"seconds": 30}'])
    model = ToolsModel([slow, answer("It was slow.")])
    status, _, _ = run_with_hub(db, config, model, user[0])
    assert status == "completed"
    [result] = results(model, 1)
    assert result["is_error"] is True
    assert "MCP server 'counting' did not answer the tool 'slow' within 1.5s" in str(result)


def test_a_failing_tool_is_an_error_result(
    db: Database, user: tuple[int, str], tmp_path: Path, count_file: Path
) -> None:
    config = write_config(
        tmp_path / "mcp.json", {"counting": stdio_spec(count_file, readOnlyTools=["fail"])}
    )
    model = ToolsModel([tool_use("toolu_f", "mcp__counting__fail", ["{}"]), answer("ok")])
    status, _, _ = run_with_hub(db, config, model, user[0])
    assert status == "completed"
    [result] = results(model, 1)
    assert result["is_error"] is True
    assert "The MCP server 'counting' answered with an error" in str(result)


def test_a_server_killed_during_a_call_gives_an_error_and_the_turn_completes(
    db: Database, user: tuple[int, str], tmp_path: Path, count_file: Path
) -> None:
    with http_server(count_file) as (url, proc):
        spec = {"url": url, "readOnlyTools": ["slow"]}
        config = write_config(tmp_path / "mcp.json", {"web": spec})
        slow = tool_use("toolu_s", "mcp__web__slow", ['{"seconds": 20}'])
        model = ToolsModel([slow, answer("The server fell.")])

        async def body(deps: Any, hub: Any) -> Any:
            turn = asyncio.create_task(run_turn(deps, user[0], "go"))
            await wait_until_async(lambda: calls(count_file) == ["slow"], 20)
            proc.kill()
            status, _, _ = await turn
            await wait_until_async(lambda: hub.links[0].state != "up", 20)
            # Down: its tools are kept, byte for byte, in the same list.
            assert hub.get("mcp__web__slow") is not None
            return status

        status = run_with_hub(db, config, model, user[0], body)
    assert status == "completed"
    [result] = results(model, 1)
    assert result["is_error"] is True and "MCP server 'web'" in str(result)


def test_a_call_while_the_server_is_down_is_an_error_and_the_list_stays_the_same(
    db: Database, user: tuple[int, str], tmp_path: Path, count_file: Path
) -> None:
    from tests.tools.mcp_fixtures import free_port

    port = free_port()
    with http_server(count_file, port) as (url, proc):
        config = write_config(
            tmp_path / "mcp.json", {"web": {"url": url, "readOnlyTools": ["lookup"]}}
        )
        name = "mcp__web__lookup"
        model = ToolsModel(
            [
                tool_use("toolu_1", name, ['{"key": "a"}']),
                answer("ok"),
                tool_use("toolu_2", name, ['{"key": "b"}']),
                answer("down"),
                tool_use("toolu_3", name, ['{"key": "c"}']),
                answer("back"),
            ]
        )

        async def body(deps: Any, hub: Any) -> Any:
            first = await run_turn(deps, user[0], "one")
            proc.kill()
            proc.wait()
            await wait_until_async(lambda: hub.links[0].state == "down", 20)
            second = await run_turn(deps, user[0], "two")
            with http_server(count_file, port):
                await wait_until_async(lambda: hub.links[0].state == "up", 20)
                third = await run_turn(deps, user[0], "three")
            return [s for s, _, _ in (first, second, third)], hub.links[0].connects

        statuses, connects = run_with_hub(db, config, model, user[0], body)
    assert statuses == ["completed"] * 3
    assert connects == 2
    assert calls(count_file) == ["lookup", "lookup"]
    down = results(model, 3)[0]
    assert down["is_error"] is True and "MCP server 'web' is unavailable" in str(down)
    assert results(model, 5)[0]["content"][0]["text"] == "value of c"
    # The same tools, the same bytes, in every request: the prompt cache holds.
    assert len({json.dumps(t, sort_keys=False) for t in model.tools}) == 1


def dead_workers_claim(
    db: Database, user_id: int, tool_use_id: str, name: str, tool_input: dict[str, Any]
) -> Any:
    """A call a worker claimed before it died; return the lease of the worker taking over."""
    turns, messages = TurnStore(db), MessageStore(db)
    dead = WorkerRegistry(db)
    dead.register()
    sid = create_session(db, user_id)["id"]
    _, lease, _ = turns.start_turn(user_id, sid, "call it", dead.worker_id)
    messages.claim_tool(lease, tool_use_id, name, tool_input)
    dead.retire()
    alive = WorkerRegistry(db)
    alive.register()
    [orphan] = turns.take_orphans(alive.worker_id, stale_after=30, limit=5)
    return orphan.lease


def test_a_non_idempotent_call_a_dead_worker_left_is_not_sent_again(
    db: Database, user: tuple[int, str], stdio_config: str, count_file: Path
) -> None:
    """The dead worker's claim is found `running`: the model reads it may or may not have
    run, and the server counted no second call."""
    lease = dead_workers_claim(db, user[0], "toolu_x", LOOKUP, {"key": "x"})
    count_file.write_text("lookup\n")  # the dead worker sent it: counted once

    async def body(deps: Any, hub: Any) -> Any:
        return await deps.tools.run_all(
            lease, user[0], [ToolCall("toolu_x", LOOKUP, {"key": "x"})], lambda: False
        )

    [run] = run_with_hub(db, stdio_config, ToolsModel([]), user[0], body)
    assert calls(count_file) == ["lookup"]
    assert run.is_error and "may or may not have completed" in run.result[0]["text"]


def test_an_idempotent_call_a_dead_worker_left_is_sent_again(
    db: Database, user: tuple[int, str], stdio_config: str, count_file: Path
) -> None:
    name = "mcp__counting__slow"
    lease = dead_workers_claim(db, user[0], "toolu_i", name, {"seconds": 0})
    model = ToolsModel([])

    async def body(deps: Any, hub: Any) -> Any:
        return await deps.tools.run_all(
            lease, user[0], [ToolCall("toolu_i", name, {"seconds": 0})], lambda: False
        )

    # Found running under the dead worker's lease: idempotent, so claimed and sent again.
    [run] = run_with_hub(db, stdio_config, model, user[0], body)
    assert calls(count_file) == ["slow"]
    assert not run.is_error and run.result[0]["text"] == "slow done"


def test_names_fit_the_messages_api_and_stay_unique() -> None:
    long = qualified("server", "x" * 80)
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", long)
    assert long != qualified("server", "x" * 81)
    assert qualified("a.b", "c d") == "mcp__a_b__c_d"


def test_a_bad_config_file_fails_the_start_naming_it(
    tmp_path: Path, app_config: dict[str, Any]
) -> None:
    from app import create_app

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"mcpServers": {"x": {"url": "ftp://nope"}}}))
    with pytest.raises(McpConfigError, match="server 'x': 'url' must be an http"):
        create_app({**app_config, "MCP_CONFIG": str(bad)})
    with pytest.raises(McpConfigError, match="MCP_CONFIG"):
        load_config(str(tmp_path / "missing.json"))


def test_a_hundred_tools_are_listed(
    db: Database, user: tuple[int, str], tmp_path: Path, count_file: Path
) -> None:
    spec = stdio_spec(count_file, env={"TOOL_COUNT": "100"})
    config = write_config(tmp_path / "mcp.json", {"many": spec})

    async def body(deps: Any, hub: Any) -> Any:
        return deps.tools_sent()

    sent = run_with_hub(db, config, ToolsModel([]), user[0], body)
    names = [t["name"] for t in sent if t["name"].startswith("mcp__many__extra_")]
    assert len(names) == 100


def stored_runs(db: Database) -> list[Any]:
    with db.read() as s:
        return list(s.scalars(select(ToolRun)))


def test_always_for_this_session_lets_later_calls_there_run_without_asking(
    db: Database, user: tuple[int, str], stdio_config: str, count_file: Path
) -> None:
    approvals, name = ApprovalStore(db), "mcp__counting__transfer"
    model = ToolsModel(
        [
            tool_use("toolu_1", name, ['{"amount": 1}']),
            answer("Moved 1."),
            tool_use("toolu_2", name, ['{"amount": 2}']),
            answer("Moved 2."),
            tool_use("toolu_3", name, ['{"amount": 3}']),
        ]
    )

    async def body(deps: Any, hub: Any) -> list[str]:
        status, _, new = await run_turn(deps, user[0], "move 1")
        decision = await asyncio.to_thread(
            approvals.decide, user[0], new.turn_id, "toolu_1", True, None, None, None, True
        )
        [go] = decision.started
        deps.events.open(go.turn.turn_id)
        went, _ = await run_to_end(Turn(deps, go.turn, go.user_id, go.lease), deps, go.turn)
        sid = new.session_id
        again, _, _ = await run_turn(deps, user[0], "move 2", session_id=sid)
        elsewhere, _, _ = await run_turn(deps, user[0], "move 3")  # another session asks
        return [status, went, again, elsewhere]

    statuses = run_with_hub(db, stdio_config, model, user[0], body)
    assert statuses == ["awaiting_approval", "completed", "completed", "awaiting_approval"]
    assert calls(count_file) == ["transfer", "transfer"]


def test_the_app_starts_its_mcp_servers_with_the_engine_and_lists_them(
    app_config: dict[str, Any], user: tuple[int, str], stdio_config: str
) -> None:
    from app import create_app

    app = create_app({**app_config, "MCP_CONFIG": stdio_config})
    try:
        auth = {"Authorization": f"Bearer {user[1]}"}
        sources = app.test_client().get("/api/tools", headers=auth).json["sources"]
        [mcp] = [s for s in sources if s["kind"] == "mcp"]
        assert (mcp["name"], mcp["state"]) == ("counting", "up")
        tools = {t["remote"]: t for t in mcp["tools"]}
        assert tools["lookup"]["read_only"] is True and tools["transfer"]["read_only"] is False
        assert tools["transfer"]["annotations"]["readOnlyHint"] is True
        sent = app.extensions["engine"].deps.tools_sent()
        assert LOOKUP in [t["name"] for t in sent]
    finally:
        app.extensions["engine"].close()
        app.extensions["db"].dispose()


def test_a_worker_gone_mid_call_never_gets_the_call_sent_twice(
    db: Database, user: tuple[int, str], tmp_path: Path, count_file: Path
) -> None:
    """A worker stops dead while its turn's MCP call runs (its task cut short, storing
    nothing more); the worker taking the turn over finds the claim and does not resend."""
    spec = stdio_spec(count_file, readOnlyTools=["slow"])
    config = write_config(tmp_path / "mcp.json", {"counting": spec})
    slow = tool_use("toolu_s", "mcp__counting__slow", ['{"seconds": 3}'])
    model = ToolsModel([slow, answer("It may or may not have run.")])
    turns = TurnStore(db)
    dead = WorkerRegistry(db)
    dead.register()
    sid = create_session(db, user[0])["id"]
    new, lease, _ = turns.start_turn(user[0], sid, "go slow", dead.worker_id)

    async def body(deps: Any, hub: Any) -> Any:
        deps.events.open(new.turn_id)
        first = Turn(deps, new, user[0], lease)
        task = asyncio.create_task(first.run())
        await wait_until_async(lambda: calls(count_file) == ["slow"], 20)
        first.stop("fenced")  # gone: nothing more is stored or sent by it
        await asyncio.wait([task])
        await asyncio.to_thread(dead.retire)
        alive = WorkerRegistry(db)
        await asyncio.to_thread(alive.register)
        [orphan] = await asyncio.to_thread(turns.take_orphans, alive.worker_id, 30, 5)
        second = Turn(deps, orphan.turn, user[0], orphan.lease, orphan.takeovers)
        status, _ = await run_to_end(second, deps, orphan.turn)
        return status

    status = run_with_hub(db, config, model, user[0], body)
    assert status == "completed"
    assert calls(count_file) == ["slow"]
    [result] = results(model, 1)
    assert result["is_error"] is True and "may or may not have completed" in str(result)


def test_a_server_that_changes_its_tools_is_listed_again(
    db: Database, user: tuple[int, str], tmp_path: Path, count_file: Path
) -> None:
    config = write_config(tmp_path / "mcp.json", {"counting": stdio_spec(count_file)})
    timings = Timings()  # a list change is seen long before the 15 s listing every MCP_PING

    async def main() -> tuple[Any, Any, Any]:
        async with running_hub(config, timings) as hub:
            before = hub.definitions([], False)
            grew = await hub.call("mcp__counting__grow", {}, user[0])
            await wait_until_async(lambda: hub.get("mcp__counting__grown") is not None, 5)
            return before, grew, hub.definitions([], False)

    before, grew, after = asyncio.run(main())
    assert grew.content == "grew"
    assert "mcp__counting__grown" not in [t["name"] for t in before]
    assert [t["name"] for t in after] == [*(t["name"] for t in before), "mcp__counting__grown"]
