"""Answers to a change the user asked for: done, or what is missing to make it."""

from __future__ import annotations

from typing import Any

from demo_model import tool_calls as c
from demo_model.answers.fmt import lines_md, money, row_line
from demo_model.change_plans import (
    budget_currency,
    candidates,
    category_named,
    the_year,
    transaction_ids,
)
from demo_model.cite import Answer, parts_of
from demo_model.intent import Intent
from demo_model.mdtext import md_text
from demo_model.subjects import group_keys
from demo_model.tool_calls import Results


def change(intent: Intent, results: Results) -> Answer:
    """Return what was changed, or why nothing was."""
    details, today = dict(intent.details), intent.period.end
    name = category_named(details["category"], today, results)
    if name is None:
        known = ", ".join(
            map(md_text, group_keys(c.result_of(results, c.by_category(the_year(today)))))
        )
        asked = md_text(details["category"])
        return f"I don't see a category called “{asked}”, so I changed nothing." + (
            f" Your categories: {known}." if known else ""
        )
    if intent.kind == "set_budget":
        currency = details["currency"] or budget_currency(name, today, results)
        if not currency:
            return (
                f"Which currency should the {md_text(name)} budget be in? Say, for example, "
                f"“set my {md_text(name.lower())} budget to {md_text(details['amount'])} USD”. "
                "I changed nothing."
            )
        args: dict[str, Any] = {"category": name, "amount": details["amount"], "currency": currency}
        if c.result_of(results, ("set_budget", args)) is None:
            return "I could not set the budget: the set_budget tool did not run."
        return (
            f"Done: your **{md_text(name)}** budget is now "
            f"{money(details['amount'], currency)} a month."
        )
    ids = transaction_ids(details, results)
    if not ids:
        return (
            f"I found no transaction at “{md_text(details['merchant'])}” on "
            f"{md_text(details['date'])}, "
            "so I changed nothing."
        )
    if len(ids) > 1:
        rows = (c.result_of(results, candidates(details)) or {}).get("transactions") or []
        listed = [(*parts_of(row_line(r)), f" (id {md_text(r['id'])})") for r in rows]
        return lines_md(["Several transactions match; tell me which one by its id:", *listed])
    args = {"transaction_id": ids[0], "category": name}
    if c.result_of(results, ("categorize_transaction", args)) is None:
        return "I could not change the category: the categorize_transaction tool did not run."
    return f"Done: transaction {md_text(ids[0])} is now in **{md_text(name)}**."
