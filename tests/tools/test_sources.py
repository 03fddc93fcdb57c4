"""Read tools return bounded, stable search_result blocks whose sources resolve for their owner."""

from __future__ import annotations

import json
from collections import defaultdict
from decimal import Decimal
from typing import Any

import pytest
from marshmallow import Schema

from models.db import Database
from tests.tools.conftest import Caller
from tools.finance.cites import spend_source, txns_source
from tools.finance.sources import BadSource, parse, resolve
from tools.finance.transactions import ROW_SOURCES
from tools.registry import (
    MAX_RESULT_CHARS,
    MAX_SOURCE_CHARS,
    MAX_SOURCES,
    Sourced,
    Tool,
    ToolContext,
    ToolRegistry,
)

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("get_transactions", {"limit": 200}),
    ("get_transactions", {"category": "groceries", "start_date": "2025-01-01"}),
    ("get_transactions", {"merchant": "pizza", "direction": "out", "pending": True}),
    ("get_transactions", {"min_amount": "40", "max_amount": "100.5", "account": "visa"}),
    ("get_spending_summary", {"start_date": "2025-01-01", "end_date": "2025-03-31"}),
    ("get_spending_summary", {"start_date": "2025-02-01", "end_date": "2025-02-28"}),
    (
        "get_spending_summary",
        {
            "start_date": "2025-01-10",
            "end_date": "2025-03-31",
            "group_by": "month",
            "category": "Restaurants",
        },
    ),
    (
        "get_spending_summary",
        {
            "start_date": "2025-01-01",
            "end_date": "2025-03-31",
            "group_by": "week",
            "category": "Groceries",
        },
    ),
    (
        "compare_spending",
        {
            "period_a_start": "2025-01-01",
            "period_a_end": "2025-01-31",
            "period_b_start": "2025-02-01",
            "period_b_end": "2025-02-28",
        },
    ),
    ("get_budget_status", {}),
    ("get_budget_status", {"month": "2025-02"}),
    ("get_account_balances", {}),
    ("find_recurring_payments", {"min_occurrences": 3}),
]


def totals(rows: list[dict[str, Any]]) -> dict[str, Decimal]:
    """Return the sum of transaction rows per currency."""
    out: dict[str, Decimal] = defaultdict(Decimal)
    for row in rows:
        out[row["currency"]] += Decimal(row["amount"])
    return dict(out)


@pytest.mark.parametrize(("name", "args"), CALLS)
def test_search_results_are_well_formed_bounded_and_stable(
    call: Caller, name: str, args: dict[str, Any]
) -> None:
    outcome = call.outcome(name, **args)
    blocks = outcome.blocks()
    assert blocks[0] == {"type": "text", "text": outcome.content}
    assert outcome.sources, "a read tool's result carries search results"
    assert len(outcome.sources) <= MAX_SOURCES
    size = sum(len(json.dumps(b, separators=(",", ":"))) for b in outcome.sources)
    assert size <= MAX_SOURCE_CHARS and size + len(outcome.content) <= MAX_RESULT_CHARS
    for block in outcome.sources:
        assert set(block) == {"type", "source", "title", "content", "citations"}
        assert block["type"] == "search_result" and block["citations"] == {"enabled": True}
        assert isinstance(block["title"], str) and block["title"]
        (text,) = block["content"]
        assert text["type"] == "text" and text["text"].strip()
        parse(block["source"])  # well-formed
    again = call.outcome(name, **args)
    assert json.dumps(again.blocks()) == json.dumps(blocks), "same call, same bytes"


@pytest.mark.parametrize(("name", "args"), CALLS)
def test_every_source_resolves_for_its_owner_only(
    call: Caller, db: Database, ledger_ids: dict[str, int], name: str, args: dict[str, Any]
) -> None:
    alice, bob = ledger_ids["alice"], ledger_ids["bob"]
    alice_ids = {r["id"] for r in call("get_transactions", limit=200)["transactions"]}
    for block in call.outcome(name, **args).sources:
        source = block["source"]
        mine = resolve(db, alice, source)
        assert mine, source
        theirs = resolve(db, bob, source)
        if source.startswith("txns:"):
            # A query runs over the asking user's rows only: never Alice's for Bob.
            assert not {r["id"] for r in theirs or []} & alice_ids
        else:
            assert theirs is None, source


def test_a_transactions_summary_block_rests_on_exactly_its_rows(call: Caller, db: Database) -> None:
    result = call("get_transactions", category="Restaurants", limit=1)
    (summary, *rows) = call.outcome("get_transactions", category="Restaurants", limit=1).sources
    assert summary["source"] == txns_source({"category": "Restaurants"})
    assert [r["source"] for r in rows] == [f"txn:{t['id']}" for t in result["transactions"]]
    resolved = resolve(db, call.user_id, summary["source"])
    assert resolved is not None and len(resolved) == result["count"]
    assert totals(resolved) == {t["currency"]: Decimal(t["net"]) for t in result["totals"]}


def test_a_spending_group_block_adds_up_to_the_group(call: Caller, db: Database) -> None:
    args = {"start_date": "2025-01-01", "end_date": "2025-03-31"}
    result = call("get_spending_summary", **args)
    by_source = {b["source"]: b for b in call.outcome("get_spending_summary", **args).sources}
    checked = 0
    for block in result["currencies"]:
        cur = block["currency"]
        for group in block["groups"]:
            source = spend_source(group["key"], args["start_date"], args["end_date"])
            assert source in by_source, group["key"]
            rows = resolve(db, call.user_id, source) or []
            assert -totals(rows)[cur] == Decimal(group["spent"]), group["key"]
            assert f"{group['spent']} {cur}" in by_source[source]["content"][0]["text"]
            checked += 1
    assert checked >= 5  # Rent, Groceries, Restaurants (USD and EUR), Subscriptions, none


def test_spending_sources_select_net_spending_by_the_money_rule() -> None:
    assert spend_source("Uncategorized", "2025-02-01", "2025-02-28") == (
        "txns:start_date=2025-02-01&end_date=2025-02-28&category=Uncategorized&flow=net_spending"
    )
    assert spend_source(None, "2025-02-01", "2025-02-28") == (
        "txns:start_date=2025-02-01&end_date=2025-02-28&flow=net_spending"
    )


def test_budget_and_account_blocks_show_their_rows(call: Caller, db: Database) -> None:
    status = call("get_budget_status")
    budgets = [b for b in call.outcome("get_budget_status").sources if b["source"][:7] == "budget:"]
    assert len(budgets) == len(status["budgets"])
    for block, row in zip(budgets, status["budgets"], strict=True):
        (found,) = resolve(db, call.user_id, block["source"]) or []
        assert found["category"] == row["category"] and found["limit"] == row["limit"]
        assert found["month"] == status["month"] == "2025-03"
    balances = call("get_account_balances")
    accounts = call.outcome("get_account_balances").sources
    for block, row in zip(accounts, balances["accounts"], strict=True):
        (found,) = resolve(db, call.user_id, block["source"]) or []
        assert found == {"id": found["id"], **row}


def test_a_recurring_series_cites_its_rows(call: Caller, db: Database) -> None:
    result = call("find_recurring_payments", min_occurrences=3)
    sources = call.outcome("find_recurring_payments", min_occurrences=3).sources
    assert len(sources) == len(result["recurring"]) >= 2  # rent and Netflix
    for block, item in zip(sources, result["recurring"], strict=True):
        assert block["source"].startswith("txns:ids=")
        assert block["title"] == f"{item['name']} · monthly · {item['typical_amount']} USD"
        charges = resolve(db, call.user_id, block["source"]) or []
        assert len(charges) == item["occurrences"]
        assert {c["merchant"] for c in charges} == {item["merchant"]}
        assert {-Decimal(c["amount"]) for c in charges} == {Decimal(item["typical_amount"])}
        assert item["next_expected_date"] in block["content"][0]["text"]


def test_many_rows_are_cut_to_the_bound(call: Caller) -> None:
    sources = call.outcome("get_transactions", limit=200).sources
    assert len(sources) == 1 + ROW_SOURCES  # the totals, then the page's first rows


class _Empty(Schema):
    pass


def test_search_results_never_push_a_result_past_its_room(db: Database) -> None:
    block = {"type": "search_result", "source": "txn:1", "title": "t", "content": []}
    fat = {**block, "content": [{"type": "text", "text": "x" * 3000}]}
    text = "y" * (MAX_RESULT_CHARS - 7000)

    def handler(ctx: ToolContext, data: dict[str, Any]) -> Sourced:
        return Sourced(text, [fat] * 10)

    registry = ToolRegistry([Tool("fat", "d", _Empty, handler)])
    outcome = registry.execute("fat", {}, ToolContext(1, db))
    assert len(outcome.sources) == 2  # 7,000 characters of room: two blocks of ~3,100


@pytest.mark.parametrize(
    "source",
    [
        "txn:",
        "txn:abc",
        "txn:-1",
        "nope:1",
        "txns:sort=amount_desc",
        "txns:category=a&category=b",
        "txns:start_date=2025-02-30",
        "txns:start_date=2025-03-01&end_date=2025-02-01",
        "txns:pending=yes",
        "txns:direction=sideways",
        "txns:min_amount=-5",
        "txns:=x",
    ],
)
def test_malformed_sources_are_refused(db: Database, source: str) -> None:
    with pytest.raises(BadSource):
        resolve(db, 1, source)


def test_an_unknown_id_or_name_resolves_to_nothing(call: Caller, db: Database) -> None:
    for source in ("txn:999999", "budget:999999", "account:999999", "txns:category=Hobbies"):
        assert resolve(db, call.user_id, source) is None
