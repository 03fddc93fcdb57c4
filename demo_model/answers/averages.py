"""Answers that rank or average: a category's average month, the merchants spent at most."""

from __future__ import annotations

from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from demo_model import tool_calls as c
from demo_model.answers.chart import chart
from demo_model.answers.fmt import cite, dec, lines_md, money, plural
from demo_model.cite import Answer, Line
from demo_model.intent import Intent
from demo_model.mdtext import md_text
from demo_model.planner import spending_subject, top_merchants
from demo_model.subjects import currencies
from demo_model.tool_calls import Results
from tools.finance.cites import spend_source, txns_source
from tools.finance.clock import days_in_month


def average(intent: Intent, results: Results) -> Answer:
    """Return a category's spend per month and its average month, per currency."""
    if not intent.subject():
        return chart(intent, results)
    subject = spending_subject(intent, results)
    if subject is None or subject.kind != "category":
        asked = md_text(intent.subject())
        return f"I can average one of your spending categories; I found none called “{asked}”."
    summary = c.result_of(results, c.by_month(intent.period, subject.name)) or {}
    months = _months(intent.period.start.isoformat(), intent.period.end.isoformat())
    period = md_text(intent.period.text())
    blocks = currencies(summary)
    if not blocks:
        return f"You spent nothing on {md_text(subject.name)} in {period}."
    lines: list[Line] = []
    for block in blocks:
        cur = str(block.get("currency"))
        spent = {str(g.get("key")): g.get("spent") for g in block.get("groups") or []}
        total = sum((dec(v) for v in spent.values()), Decimal(0))
        mean = (total / len(months)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        lines.append(
            f"**{md_text(subject.name)}**: **{money(f'{mean}', cur)} a month** on average over "
            f"{period} ({plural(len(months), 'month')}):"
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
                    cite(money(value, cur), [spend_source(subject.name, first, last)]),
                )
            )
    return lines_md(lines)


def merchants(intent: Intent, results: Results) -> Answer:
    """Return the merchants spent at most over the period, each with its net spend."""
    names = top_merchants(intent, results) or []
    period = md_text(intent.period.text())
    if not names:
        return f"I found no spending at any merchant in {period}."
    per: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for name in names:
        found = c.result_of(results, c.totals(intent.period, {"merchant": name})) or {}
        for total in found.get("totals") or []:
            per[str(total.get("currency"))].append((name, total))
    lines: list[Line] = [f"Where you spent the most in {period}:"]
    for cur, rows in sorted(per.items()):
        for name, total in rows:
            source = txns_source(c.totals(intent.period, {"merchant": name})[1])
            count = int(total.get("count") or 0)
            lines.append(
                (
                    f"- {md_text(name)}: ",
                    cite(money(total.get("net"), cur), [source]),
                    f" ({plural(count, 'transaction')})",
                )
            )
    return lines_md(lines)


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
