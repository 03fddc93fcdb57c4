"""Answers that rank or average: the average month of spending (all or one category), stated as
a number, and the merchants spent at most in each currency."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from demo_model import tool_calls as c
from demo_model.answers.fmt import cite, currency_note, dec, lines_md, money, plural
from demo_model.cite import Answer, Line
from demo_model.intent import Intent
from demo_model.mdtext import md_text
from demo_model.planner import spending_subject, top_merchants
from demo_model.subjects import currencies
from demo_model.tool_calls import Results
from tools.finance.cites import spend_source, txns_source
from tools.finance.clock import days_in_month


def average(intent: Intent, results: Results) -> Answer:
    """Return the spend of each month and the average month, per currency: a number."""
    name: str | None = None
    if intent.subject():
        subject = spending_subject(intent, results)
        if subject is None or subject.kind != "category":
            asked = md_text(intent.subject())
            return f"I can average one of your spending categories; I found none called “{asked}”."
        name = subject.name
    summary = c.result_of(results, c.by_month(intent.period, name)) or {}
    months = _months(intent.period.start.isoformat(), intent.period.end.isoformat())
    period = md_text(intent.period.text())
    what = md_text(name) if name else "Your spending"
    blocks = currencies(summary)
    if not blocks:
        return f"You spent nothing{' on ' + md_text(name) if name else ''} in {period}."
    lines: list[Line] = []
    for block in blocks:
        cur = str(block.get("currency"))
        spent = {str(g.get("key")): g.get("spent") for g in block.get("groups") or []}
        total = sum((dec(v) for v in spent.values()), Decimal(0))
        mean = (total / len(months)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        lines.append(
            f"**{what}**: **{money(f'{mean}', cur)} a month** on average over {period} "
            f"({plural(len(months), 'month')}):"
        )
        for month in months:
            value = spent.get(month)
            if value is None:
                lines.append(f"- {md_text(month)}: nothing")
                continue
            first, last = _month_span(month)
            lines.append(
                (
                    f"- {md_text(month)}: ",
                    cite(money(value, cur), [spend_source(name, first, last)]),
                )
            )
    return lines_md(lines + currency_note({str(b.get("currency")) for b in blocks}))


def merchants(intent: Intent, results: Results) -> Answer:
    """Return each currency's merchants spent at most over the period, with their net spend."""
    leaders = top_merchants(intent, results) or {}
    period = md_text(intent.period.text())
    if not any(leaders.values()):
        return f"I found no spending at any merchant in {period}."
    lines: list[Line] = [f"Where you spent the most in {period}, in each currency:"]
    for cur, names in sorted(leaders.items()):
        lines.append(f"- {md_text(cur)}:")
        for name in names:
            call = c.totals(intent.period, {"merchant": name})
            found = c.result_of(results, call) or {}
            total = _in(found.get("totals") or [], cur)
            if total is None:
                continue
            lines.append(
                (
                    f"  - {md_text(name)}: ",
                    cite(money(total.get("net"), cur), [txns_source(call[1])]),
                    f" ({plural(int(total.get('count') or 0), 'transaction')})",
                )
            )
    return lines_md(lines + currency_note(set(leaders)))


def _in(totals: list[dict[str, Any]], currency: str) -> dict[str, Any] | None:
    return next((t for t in totals if t.get("currency") == currency), None)


def _months(start: str, end: str) -> list[str]:
    year, month = int(start[:4]), int(start[5:7])
    out = []
    while f"{year:04d}-{month:02d}" <= end[:7]:
        out.append(f"{year:04d}-{month:02d}")
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return out


def _month_span(month: str) -> tuple[str, str]:
    year, number = int(month[:4]), int(month[5:7])
    return f"{month}-01", f"{month}-{days_in_month(year, number):02d}"
