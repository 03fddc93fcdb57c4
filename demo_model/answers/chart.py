"""The answer around a chart: what it shows, and its totals, in the chart's own figures."""

from __future__ import annotations

from typing import Any

from demo_model.answers.fmt import lines_md
from demo_model.cite import Answer, Line
from demo_model.intent import Intent
from demo_model.mdtext import md_text
from demo_model.tool_calls import Results

LINES = ("budget_progress", "account_balance", "balance_forecast")
WHAT = {
    "spending_by_month": "spending by month",
    "spending_by_category": "spending by category",
    "category_share": "share of spending by category",
    "category_by_month": "spending by month, stacked by category",
    "income_vs_spending": "income against spending by month",
    "budget_progress": "budget: spend to date against its limit",
    "account_balance": "balance at each month's end",
    "balance_forecast": "balance as it was and as projected from your recurring payments "
    "(the dashed line)",
}


def chart(intent: Intent, results: Results) -> Answer:
    """Return the words around a chart: what it shows; its figures are the chart's own bars."""
    found = _result(results)
    drawn = dict(intent.details).get("chart", "spending_by_month")
    what = WHAT.get(drawn, "your records")
    if found.get("category"):
        what = f"{md_text(found['category'])} {what}"
    if found.get("account"):
        what = f"{md_text(found['account'])} {what}"
    period = md_text(f"{found.get('start_date', '')} to {found.get('end_date', '')}")
    charts = [c for c in found.get("charts") or [] if isinstance(c, dict)]
    if not charts:
        return f"You have no transactions from {period} to chart."
    names = " and ".join(md_text(c.get("currency", "")) for c in charts)
    part = {"category_share": "a slice", **dict.fromkeys(LINES, "a point")}.get(drawn, "a bar")
    behind = "behind it" if part == "a point" else "it adds up"
    lines: list[Line] = [
        f"Here is your {what}, {period}, drawn from your transactions in {names}.",
        f"Select {part} to see the transactions {behind}; the table under the chart lists "
        "every figure.",
    ]
    if len(charts) > 1:
        lines.append("Each currency has its own chart: amounts are never converted or added up.")
    return lines_md(lines)


def _result(results: Results) -> dict[str, Any]:
    for name, _, result in reversed(results):
        if name == "chart" and isinstance(result, dict):
            return result
    return {}
