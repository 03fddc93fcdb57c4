"""Spending in a place: the records carry no place, so say so and offer the per-currency totals."""

from __future__ import annotations

from demo_model.answers.fmt import lines_md, money, plural
from demo_model.cite import Answer, Line
from demo_model.intent import Intent
from demo_model.mdtext import md_text
from demo_model.tool_calls import Results, by_category, result_of


def place(intent: Intent, results: Results) -> Answer:
    """Return the honest answer: no place in the records; a currency is not a place."""
    where = md_text(dict(intent.details).get("place", "a place").title())
    summary = result_of(results, by_category(intent.period))
    blocks = summary.get("currencies") or [] if isinstance(summary, dict) else []
    period = md_text(f"{intent.period.start.isoformat()} to {intent.period.end.isoformat()}")
    lines: list[Line] = [
        f"Your records carry no place: transactions have no city or country, so I cannot "
        f"tell what you spent in {where}. A currency is not a place either: euros are spent "
        "in many countries, so I will not count them as spending there."
    ]
    if blocks:
        lines.append(f"What I can give you is your spending per currency, {period}:")
        for b in blocks:
            cur = str(b["currency"])
            spent = money(b["total_spent"], cur)
            lines.append(
                f"- {md_text(cur)}: **{spent}** across {plural(b['count'], 'transaction')}"
            )
    else:
        lines.append(f"You have no spending from {period}.")
    return lines_md(lines)
