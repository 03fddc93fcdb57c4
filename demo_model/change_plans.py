"""Plan a change the user asked for: look names up, then call the write tool (it asks approval)."""

from __future__ import annotations

from datetime import date
from typing import Any

from demo_model import tool_calls as c
from demo_model.periods import Period, rolling
from demo_model.subjects import group_keys
from demo_model.tool_calls import Call, Results
from demo_model.vocabulary import category_in, names_term, names_topic

CANDIDATES = 5


def the_year(today: date) -> Period:
    """The period whose categories a change may name: the last 12 months."""
    return rolling(today, 12, "month")


def plan_change(kind: str, details: dict[str, str], today: date, results: Results) -> list[Call]:
    """Return the next calls of a change: look up names first, then the write tool."""
    year = the_year(today)
    first = [c.by_category(year)]
    if kind == "set_budget":
        first.append(c.budget(rolling(today, 1, "day")))
    elif "merchant" in details:
        first.append(candidates(details))
    if todo := c.missing(results, first):
        return todo
    name = category_named(details["category"], today, results)
    if name is None:
        return []
    if kind == "set_budget":
        currency = details["currency"] or budget_currency(name, today, results)
        if not currency:
            return []
        args = {"category": name, "amount": details["amount"], "currency": currency}
        return c.missing(results, [("set_budget", args)])
    ids = transaction_ids(details, results)
    if len(ids) != 1:
        return []
    return c.missing(
        results, [("categorize_transaction", {"transaction_id": ids[0], "category": name})]
    )


def candidates(details: dict[str, str]) -> Call:
    """The transactions at the merchant on the day the user named."""
    day = details["date"]
    where = {"start_date": day, "end_date": day, "merchant": details["merchant"]}
    return "get_transactions", {**where, "limit": CANDIDATES}


def transaction_ids(details: dict[str, str], results: Results) -> list[int]:
    """Return the id the user gave, or the ids of the transactions matching their description."""
    if "id" in details:
        return [int(details["id"])]
    found = c.result_of(results, candidates(details)) or {}
    return [int(r["id"]) for r in found.get("transactions") or [] if "id" in r]


def category_named(what: str, today: date, results: Results) -> str | None:
    """Return the user's category that `what` names, among budgets and spending categories."""
    names = group_keys(c.result_of(results, c.by_category(the_year(today))))
    status = c.result_of(results, c.budget(rolling(today, 1, "day"))) or {}
    names += [str(b.get("category")) for b in status.get("budgets") or []]
    topic = category_in(what)
    found = [n for n in names if names_term(n, what) or (topic and names_topic(n, topic))]
    return found[0] if found else None


def budget_currency(name: str, today: date, results: Results) -> str | None:
    """Return the currency of the category's budget, or of all budgets when they share one."""
    status = c.result_of(results, c.budget(rolling(today, 1, "day"))) or {}
    rows: list[dict[str, Any]] = status.get("budgets") or []
    own = {str(b.get("currency")) for b in rows if b.get("category") == name}
    every = {str(b.get("currency")) for b in rows}
    for codes in (own, every):
        if len(codes) == 1:
            return codes.pop()
    return None
