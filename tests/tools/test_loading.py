"""TOOLS: operator tools modules join the registry at start; a bad one stops the start."""

from __future__ import annotations

import sys
import types
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from marshmallow import Schema

from config import Timings
from models.db import Database
from tests.engine.streams import answer, tool_use
from tests.tools.engine_turns import ToolsModel, deps_for, run, run_turn
from tools import default_registry
from tools.examples import savings
from tools.loading import ToolsModuleError, load_tools
from tools.registry import Tool, ToolContext


def fake_module(name: str, **attrs: Any) -> None:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    sys.modules[name] = module


def echo_tool(name: str) -> Tool:
    return Tool(name=name, description="echo", schema=Schema, handler=lambda c, d: d)


def test_the_example_module_joins_the_finance_tools() -> None:
    registry = default_registry(["tools.examples.savings"])
    names = [d["name"] for d in registry.definitions()]
    assert names[-2:] == ["plan_savings", "save_note"]
    assert "get_transactions" in names
    plan = registry.definitions()[-2]["input_schema"]
    assert plan["required"] == ["goal", "monthly"]


def test_a_module_attribute_or_a_function_returning_tools(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_module("acme_tools", MINE=lambda: [echo_tool("acme_echo")])
    monkeypatch.setitem(sys.modules, "acme_tools", sys.modules["acme_tools"])
    assert [t.name for t in load_tools(["acme_tools:MINE"])] == ["acme_echo"]


@pytest.mark.parametrize(
    ("spec", "attrs", "says"),
    [
        ("no_such_tools_module", None, "cannot import 'no_such_tools_module'"),
        ("bad_tools_a", {}, "'bad_tools_a' has no attribute 'TOOLS'"),
        ("bad_tools_b", {"TOOLS": ["not a tool"]}, "must be a list of tools.registry.Tool"),
        ("bad_tools_c:make", {"make": lambda: 1 / 0}, "failed: ZeroDivisionError"),
        ("bad_tools_d", {"TOOLS": [echo_tool("get_transactions")]}, "a name taken"),
    ],
)
def test_a_bad_module_fails_the_start_naming_it(
    spec: str, attrs: dict[str, Any] | None, says: str, app_config: dict[str, Any]
) -> None:
    from app import create_app

    if attrs is not None:
        fake_module(spec.partition(":")[0], **attrs)
    with pytest.raises(ToolsModuleError, match="TOOLS: .*" + says.replace("(", r"\(")):
        create_app({**app_config, "TOOLS": spec})


def test_the_app_offers_the_tools_of_its_modules(app_config: dict[str, Any]) -> None:
    from app import create_app

    app = create_app({**app_config, "TOOLS": "tools.examples.savings"})
    try:
        names = [d["name"] for d in app.extensions["engine"].deps.tool_definitions]
        assert {"plan_savings", "save_note"} <= set(names)
    finally:
        app.extensions["engine"].close()
        app.extensions["db"].dispose()


def test_a_turn_runs_an_example_tool_and_answers(db: Database, user: tuple[int, str]) -> None:
    registry = default_registry(["tools.examples.savings"])
    script = tool_use("toolu_p", "plan_savings", ['{"goal": "1000", "monthly": "150"}'])
    model = ToolsModel([script, answer("Seven months.")])
    with ThreadPoolExecutor(4) as pool:
        deps = deps_for(db, pool, model, registry, Timings().scaled(0.05))
        status, _, _ = run(lambda: run_turn(deps, user[0], "how long?"))
    assert status == "completed"
    [result] = [b for b in model.requests[1][-1]["content"] if b["type"] == "tool_result"]
    assert result["content"][0]["text"] == '{"months":7,"remaining":"1000.00"}'


def test_the_example_write_tool_waits_for_approval(db: Database, user: tuple[int, str]) -> None:
    registry = default_registry(["tools.examples.savings"])
    model = ToolsModel([tool_use("toolu_n", "save_note", ['{"text": "buy milk"}'])])
    with ThreadPoolExecutor(4) as pool:
        deps = deps_for(db, pool, model, registry, Timings().scaled(0.05))
        status, _, _ = run(lambda: run_turn(deps, user[0], "note it"))
    assert status == "awaiting_approval"
    assert savings.NOTES.get(user[0]) is None
    ctx = ToolContext(user[0], db)
    assert registry.preview("save_note", {"text": "x"}, ctx)["summary"] == "Save a note: x"
