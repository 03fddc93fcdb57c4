"""The JSON Schema sent to the model accepts exactly what the marshmallow schema accepts."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError
from marshmallow import ValidationError as MarshmallowError

from tools.finance import FINANCE_TOOLS
from tools.registry import Tool

TOOLS = {t.name: t for t in FINANCE_TOOLS}
WRITES = {"set_budget", "categorize_transaction", "categorize_transactions"}


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    """ECMA-262 `pattern`: "$" never matches before a trailing newline and \\d is ASCII."""
    if isinstance(instance, str) and not re.search(
        re.sub(r"(?<!\\)\$", r"\\Z", pattern), instance, re.ASCII
    ):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


ECMAValidator = validators.extend(Draft202012Validator, {"pattern": _ecma_pattern})
# The schemas checked against the metaschema already, as JSON.
_CHECKED: set[str] = set()


def json_schema_accepts(schema: dict[str, Any], value: Any) -> bool:
    """Validate with the jsonschema library (draft 2020-12, formats checked, ECMA patterns),
    the schema itself checked against the draft's metaschema the first time it is seen."""
    seen = json.dumps(schema, sort_keys=True)
    if seen not in _CHECKED:  # a check costs a hundred validations
        Draft202012Validator.check_schema(schema)
        _CHECKED.add(seen)
    return ECMAValidator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER).is_valid(value)


def marshmallow_accepts(tool: Tool, value: dict[str, Any]) -> bool:
    try:
        tool.schema().load(value)
    except MarshmallowError:
        return False
    return True


def test_every_tool_has_a_described_closed_schema() -> None:
    assert list(TOOLS) == [
        "get_transactions",
        "get_spending_summary",
        "get_cash_flow",
        "get_account_balances",
        "get_budget_status",
        "compare_spending",
        "find_recurring_payments",
        "forecast_balance",
        "get_upcoming_bills",
        "chart",
        "set_budget",
        "categorize_transaction",
        "categorize_transactions",
    ]
    for tool in FINANCE_TOOLS:
        schema = tool.definition()["input_schema"]
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert "user_id" not in schema["properties"]
        assert tool.side_effects == (tool.name in WRITES)
        assert (tool.preview is not None) == tool.side_effects
        for name, prop in schema["properties"].items():
            assert len(prop.get("description", "")) > 15, (tool.name, name)
            assert "number" not in str(prop.get("type")), "money and counts are never floats"


def test_key_structure_of_get_transactions() -> None:
    props = TOOLS["get_transactions"].definition()["input_schema"]["properties"]
    assert props["limit"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 200,
        "description": "Rows per page, 1 to 200.",
        "default": 50,
    }
    assert props["sort"]["enum"] == ["date_desc", "date_asc", "amount_desc", "amount_asc"]
    assert props["sort"]["default"] == "date_desc"
    assert props["start_date"]["format"] == "date"
    assert props["min_amount"]["type"] == "string"
    assert props["pending"]["type"] == "boolean"
    assert "required" not in TOOLS["get_transactions"].definition()["input_schema"]
    assert props["flow"]["enum"] == ["spending", "refund", "income", "transfer", "net_spending"]
    # Without a period a summary covers all of the user's history, and says so.
    assert "required" not in TOOLS["get_spending_summary"].definition()["input_schema"]
    forecast = TOOLS["forecast_balance"].definition()["input_schema"]
    assert forecast["required"] == ["date"]
    month = TOOLS["get_budget_status"].definition()["input_schema"]["properties"]["month"]
    assert month["pattern"] == "^(19|20)[0-9]{2}-(0[1-9]|1[0-2])$"


ARABIC_DATE = "\u0662\u0660\u0662\u0665-\u0660\u0661-\u0663\u0661"  # 2025-01-31
ARABIC_TWELVE = "\u0661\u0662"
TRICKY = [
    None,
    True,
    False,
    0,
    1,
    -1,
    3,
    12,
    50,
    200,
    201,
    2.0,
    5.5,
    "",
    " ",
    "x",
    "50",
    "true",
    "2025-01-31",
    "2025-02-30",
    "2025-1-31",
    "20250131",
    "2025-W05-1",
    "2025-01-31T00:00",
    "2025-01-31\n",
    ARABIC_DATE,
    "0000-01-01",
    "2025-03",
    "2025-13",
    "1899-12",
    "2025-03\n",
    "12",
    "12.50",
    "0.0001",
    "1.23456",
    "-3",
    "+3",
    "1e3",
    "NaN",
    "Infinity",
    ARABIC_TWELVE,
    " 12",
    "1234567890123",
    "date_desc",
    "amount_asc",
    "newest",
    "category",
    "week",
    "out",
    "in",
    "groceries",
    "a" * 80,
    "a" * 81,
    [],
    {},
    [{"transaction_id": 1, "category": "Rent"}],
    [{"transaction_id": 0, "category": "Rent"}],
    [{"transaction_id": 1, "category": ""}],
    [{"transaction_id": 1}],
    [{"id": 1}],
    [1],
    [{"transaction_id": 1, "category": "Rent", "note": "x"}],
]


# Inputs every tool accepts; single fields are then varied on top of them.
BASELINES: dict[str, dict[str, Any]] = {
    "get_spending_summary": {"start_date": "2025-01-01", "end_date": "2025-01-31"},
    "compare_spending": {
        "period_a_start": "2025-01-01",
        "period_a_end": "2025-01-31",
        "period_b_start": "2025-02-01",
        "period_b_end": "2025-02-28",
    },
    "chart": {"kind": "spending_by_month", "start_date": "2025-01-01", "end_date": "2025-03-31"},
    "forecast_balance": {"date": "2025-06-30"},
    "set_budget": {"category": "Groceries", "amount": "400"},
    "categorize_transaction": {"transaction_id": 1, "category": "Groceries"},
    "categorize_transactions": {"changes": [{"transaction_id": 1, "category": "Groceries"}]},
}


def _keys(tool: Tool) -> list[str]:
    return [*tool.schema().load_fields, "user_id", "extra"]


# get_transactions has the most fields: 6.5 s with 2 workers on a quiet machine, 34 s loaded.
@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n == "get_transactions" else n for n in TOOLS],
)
def test_each_field_alone_agrees(name: str) -> None:
    tool = TOOLS[name]
    schema = tool.definition()["input_schema"]
    base = BASELINES.get(name, {})
    assert marshmallow_accepts(tool, base)
    accepted = 0
    for key in _keys(tool):
        without = {k: v for k, v in base.items() if k != key}
        assert json_schema_accepts(schema, without) == marshmallow_accepts(tool, without), key
        for value in TRICKY:
            candidate = {**base, key: value}
            expected = marshmallow_accepts(tool, candidate)
            assert json_schema_accepts(schema, candidate) == expected, candidate
            accepted += expected
    assert accepted > 0 or not tool.schema().load_fields


@pytest.mark.parametrize("name", list(TOOLS))
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_random_combinations_agree(name: str, data: st.DataObject) -> None:
    tool = TOOLS[name]
    value = data.draw(_inputs_of(name))
    if data.draw(st.booleans()):
        value = {**BASELINES.get(name, {}), **value}
    schema = _input_schema(name)
    assert json_schema_accepts(schema, value) == marshmallow_accepts(tool, value), value


# Made once per tool, not at each of the 300 examples: the strategy (hypothesis builds and
# validates a new one at every `st.sampled_from(...)`) and the tool's JSON Schema, derived
# from its marshmallow schema as `Tool.definition()` derives it (the test reads it only).
@functools.cache
def _inputs_of(name: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(_keys(TOOLS[name])), st.sampled_from(TRICKY))


@functools.cache
def _input_schema(name: str) -> dict[str, Any]:
    return TOOLS[name].definition()["input_schema"]


@pytest.mark.parametrize(
    ("name", "value", "accepted"),
    [
        ("get_transactions", {}, True),
        ("get_transactions", {"start_date": "2025-01-31", "limit": 200}, True),
        ("get_transactions", {"min_amount": "12.50", "max_amount": "0.0001"}, True),
        ("get_transactions", {"min_amount": ARABIC_TWELVE}, False),
        ("get_transactions", {"start_date": "2025-02-30"}, False),
        ("get_transactions", {"start_date": "2025-W05-1"}, False),
        ("get_transactions", {"limit": 2.0}, True),  # JSON Schema: 2.0 is an integer
        ("get_transactions", {"limit": 2.5}, False),
        ("get_transactions", {"pending": 1}, False),
        ("get_spending_summary", {"start_date": "2025-01-01"}, True),
        ("get_transactions", {"ids": "12,40"}, True),
        ("get_transactions", {"ids": "12,,40"}, False),
        ("get_transactions", {"ids": "0"}, False),
        ("get_transactions", {"ids": "12,40\n"}, False),
        ("get_transactions", {"flow": "refund"}, True),
        ("get_transactions", {"flow": "refunds"}, False),
        ("forecast_balance", {}, False),
        ("forecast_balance", {"date": "2025-12-31", "include_budgets": True}, True),
        ("get_upcoming_bills", {"days": 0}, False),
        ("get_upcoming_bills", {"days": 366}, True),
        ("get_budget_status", {"month": "2025-03"}, True),
        ("get_budget_status", {"month": "2025-03\n"}, False),
        ("get_account_balances", {"user_id": 2}, False),
        ("set_budget", {"category": "Rent", "amount": "0.01", "currency": "usd"}, True),
        ("set_budget", {"category": "Rent", "amount": "0.00"}, False),
        ("set_budget", {"category": "Rent", "amount": "0400"}, False),
        ("set_budget", {"category": "Rent", "amount": "99999999.99"}, True),
        ("set_budget", {"category": "Rent", "amount": "100000000"}, False),
        ("set_budget", {"category": "Rent", "amount": "1.234"}, False),
        ("set_budget", {"category": "Rent", "amount": "12", "currency": "USD\n"}, False),
        ("set_budget", {"category": "Rent", "amount": 12}, False),
        ("categorize_transaction", {"transaction_id": 0, "category": "Rent"}, False),
        ("categorize_transaction", {"transaction_id": "1", "category": "Rent"}, False),
    ],
)
def test_both_sides_on_known_cases(name: str, value: dict[str, Any], accepted: bool) -> None:
    tool = TOOLS[name]
    assert marshmallow_accepts(tool, value) is accepted
    assert json_schema_accepts(tool.definition()["input_schema"], value) is accepted
