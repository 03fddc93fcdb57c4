"""Answers about money moving: in against out over a period, and what is still pending."""

from __future__ import annotations

from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal

from demo_model import tool_calls as c
from demo_model.answers.fmt import cite, dec, lines_md, money, plural, row_line
from demo_model.answers.money_in import income
from demo_model.answers.spending import spending
from demo_model.cite import Answer, Line, Part
from demo_model.intent import Intent
from demo_model.mdtext import md_text
from demo_model.planner import income_categories
from demo_model.subjects import currencies
from demo_model.tool_calls import Results
from tools.finance.cites import txns_source


def in_and_out(intent: Intent, results: Results) -> Answer:
    """Return the period's income, then its spending: each as its own answer reads it."""
    return [
        "**Money in**\n\n",
        *_parts(income(intent, results)),
        "\n\n**Money out**\n\n",
        *_parts(spending(intent, results)),
    ]


def _parts(answer: Answer) -> list[Part]:
    return [answer] if isinstance(answer, str) else list(answer)


def savings_rate(intent: Intent, results: Results) -> Answer:
    """Return the share of income not spent, per currency, then the figures it comes from."""
    income_in = _income_totals(intent, results)
    summary = c.result_of(results, c.by_category(intent.period)) or {}
    spent = {str(b.get("currency")): dec(b.get("total_spent")) for b in currencies(summary)}
    period = md_text(intent.period.text())
    lines: list[Line] = []
    for cur, came in sorted(income_in.items()):
        if came <= 0:
            continue
        rate = ((came - spent.get(cur, Decimal(0))) * 100 / came).quantize(
            Decimal("0.1"), rounding=ROUND_HALF_UP
        )
        # A negative rate: more went out than came in.
        said = f"**{rate}%** of your income kept" if rate >= 0 else f"**{rate}%**: you spent more"
        lines.append(f"Your savings rate in {period}, {md_text(cur)}: {said}.")
    if not lines:
        lines.append(f"I found no income in {period}, so there is no savings rate to work out.")
    lines.append("It is income less spending, over income; the figures it comes from:")
    return [*_parts(lines_md(lines)), "\n\n", *_parts(in_and_out(intent, results))]


def _income_totals(intent: Intent, results: Results) -> dict[str, Decimal]:
    out: dict[str, Decimal] = defaultdict(Decimal)
    for name in income_categories(intent, results) or []:
        found = c.result_of(results, c.money_in(intent.period, {"category": name})) or {}
        for total in found.get("totals") or []:
            out[str(total.get("currency"))] += dec(total.get("money_in"))
    return out


def pending(intent: Intent, results: Results) -> Answer:
    """Return the transactions not yet posted, with their totals per currency."""
    found = c.result_of(results, c.pending()) or {}
    rows = found.get("transactions") or []
    if not rows:
        return "You have no pending transactions: everything has posted."
    source = txns_source(c.pending()[1])
    count = int(found.get("count") or len(rows))
    lines: list[Line] = [f"You have {plural(count, 'pending transaction')}:"]
    lines += [row_line(r, True) for r in rows]
    for total in found.get("totals") or []:
        cur, net = str(total.get("currency")), dec(total.get("net"))
        way = "out" if net < 0 else "in"
        figure = cite(money(total.get("net"), cur), [source])
        words = f" {way} in all, until they post."
        lines.append((f"In {md_text(cur)}, they come to ", figure, words))
    return lines_md(lines)
