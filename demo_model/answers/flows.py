"""Answers about money moving: in against out over a period, and what is still pending."""

from __future__ import annotations

from demo_model import tool_calls as c
from demo_model.answers.fmt import cite, dec, lines_md, money, plural, row_line
from demo_model.answers.money_in import income
from demo_model.answers.spending import spending
from demo_model.cite import Answer, Line, Part
from demo_model.intent import Intent
from demo_model.mdtext import md_text
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
