"""ToolRegistry.preview, and the write tools' definitions as the Messages API takes them."""

from __future__ import annotations

import re
from typing import Any

import pytest
from anthropic.types import ToolParam
from jsonschema import Draft202012Validator
from marshmallow import Schema
from pydantic import TypeAdapter
from sqlalchemy import exc

from models.db import Database
from tests.tools.conftest import Caller, budgets, categories
from tools.finance import FINANCE_TOOLS
from tools.registry import Tool, ToolContext, ToolOutcome, ToolRegistry

WRITES = [t for t in FINANCE_TOOLS if t.side_effects]


@pytest.mark.parametrize(
    ("name", "tool_input"),
    [
        ("delete_everything", {}),
        ("set_budget", ["Groceries", "400"]),
        ("set_budget", {"category": "Groceries"}),
        ("set_budget", {"category": "Groceries", "amount": "4", "user_id": 2}),
        ("categorize_transaction", {"transaction_id": True, "category": "Rent"}),
    ],
)
def test_preview_refuses_input_as_execute_does(
    call: Caller, db: Database, name: str, tool_input: Any
) -> None:
    ctx = ToolContext(call.user_id, db)
    before = (budgets(db), categories(db))
    assert call.registry.preview(name, tool_input, ctx) == call.registry.execute(
        name, tool_input, ctx
    )
    assert (budgets(db), categories(db)) == before


def test_a_read_only_tool_has_no_preview(call: Caller, db: Database) -> None:
    ctx = ToolContext(call.user_id, db)
    outcome = call.registry.preview("get_budget_status", {}, ctx)
    assert outcome == ToolOutcome(
        "The tool 'get_budget_status' changes nothing, so it has no preview.", True
    )
    # Its input is still validated first, as execute would.
    bad = call.registry.preview("get_budget_status", {"month": "March"}, ctx)
    assert isinstance(bad, ToolOutcome) and "'month':" in bad.content


class _Empty(Schema):
    """No input."""


def _outage(ctx: ToolContext, data: dict[str, Any]) -> dict[str, Any]:
    raise exc.OperationalError("SELECT 1", {}, Exception("database is locked"))


def _broken(ctx: ToolContext, data: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError("bug")


def test_preview_raises_an_outage_and_reports_a_bug(db: Database) -> None:
    registry = ToolRegistry(
        [
            Tool("out", "d", _Empty, _outage, side_effects=True, preview=_outage),
            Tool("bug", "d", _Empty, _broken, side_effects=True, preview=_broken),
        ]
    )
    with pytest.raises(exc.OperationalError):
        registry.preview("out", {}, ToolContext(1, db))
    assert registry.preview("bug", {}, ToolContext(1, db)) == ToolOutcome(
        "The tool 'bug' failed: RuntimeError. Try again.", True
    )


def test_a_tool_with_side_effects_must_have_a_preview() -> None:
    with pytest.raises(ValueError, match="needs a preview"):
        Tool("w", "d", _Empty, _broken, side_effects=True)


# --- the definitions sent to the Messages API -------------------------------------------

TOOL_PARAM = TypeAdapter(ToolParam)
# Lookarounds and backreferences are regex features tool schemas should not rely on.
UNPORTABLE = re.compile(r"\(\?[=!<]|\\[1-9]|\\k<")


@pytest.mark.parametrize("tool", WRITES, ids=lambda t: t.name)
def test_the_definitions_are_valid_messages_api_tools(tool: Tool) -> None:
    definition = tool.definition()
    assert TOOL_PARAM.validate_python(definition) == definition
    assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", definition["name"])
    schema = definition["input_schema"]
    Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == [k for k in schema["properties"] if k != "currency"]
    props = list(schema["properties"].values())
    # A batch write takes one array of closed objects, each checked like a single write's.
    for prop in list(props):
        if prop["type"] == "array":
            items = prop["items"]
            assert items["type"] == "object" and items["additionalProperties"] is False
            assert items["required"] and prop["maxItems"] <= 200
            props += items["properties"].values()
    for prop in props:
        assert prop["type"] in ("string", "integer", "array") and len(prop["description"]) > 15
        assert not UNPORTABLE.search(prop.get("pattern", ""))
