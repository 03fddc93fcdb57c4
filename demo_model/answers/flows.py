"""Answers about money moving: in against out over a period, and what is still pending."""

from __future__ import annotations

from typing import Any

from demo_model import tool_calls as c
from demo_model.answers.fmt import (
    cite,
    currency_note,
    dec,
    lines_md,
    money,
    plural,
    row_line,
    signed,
)
from demo_model.answers.honest import data_note
from demo_model.answers.money_in import flow_source
from demo_model.cite import Answer, Line, Part
from demo_model.intent import Intent
from demo_model.mdtext import md_text
from demo_model.subjects import currencies
from demo_model.tool_calls import Results
from tools.finance.cites import txns_source


def _parts(answer: Answer) -> list[Part]:
    return [answer] if isinstance(answer, str) else list(answer)


def in_and_out(intent: Intent, results: Results) -> Answer:
    """Return, per currency, money in (income) against money out (spending), and the net."""
    found = c.result_of(results, c.cash_flow(intent.period)) or {}
    blocks = currencies(found)
    if not blocks:
        return data_note(results) or f"I found no transactions in {intent.period.text()}."
    lines: list[Line] = [f"Money in and out in {intent.period.text()}:"]
    for block in blocks:
        lines += _in_and_out(intent, block)
    lines.append(
        "Money in is income (salary and every other payment in, with or without a category); "
        "refunds come off spending, and transfers between your own accounts count as neither."
    )
    return lines_md(lines + currency_note({str(b["currency"]) for b in blocks}))


def _in_and_out(intent: Intent, block: dict[str, Any]) -> list[Line]:
    cur = block["currency"]
    lines: list[Line] = [
        (
            f"- {md_text(cur)}: in ",
            cite(f"**{money(block['income'], cur)}**", [flow_source(intent, "income")]),
            "",
        ),
        (
            "  - out ",
            cite(f"**{money(block['spending'], cur)}**", [flow_source(intent, "net_spending")]),
            " after refunds",
        ),
    ]
    if dec(block.get("refunds")) > 0:
        lines += [
            (
                "    - spent ",
                cite(
                    money(block["spending_before_refunds"], cur), [flow_source(intent, "spending")]
                ),
                " before refunds",
            ),
            (
                "    - less refunds of ",
                cite(money(block["refunds"], cur), [flow_source(intent, "refund")]),
            ),
        ]
    net = block.get("net")
    way = "more came in than went out" if dec(net) >= 0 else "more went out than came in"
    lines.append(f"  - net {signed(net, cur)}: {way}")
    moved = block.get("transfers_excluded") or {}
    if int(moved.get("count") or 0):
        lines.append(
            f"  - not counted: {plural(int(moved['count']), 'transfer')} between your accounts"
        )
    return lines


def savings_rate(intent: Intent, results: Results) -> Answer:
    """Return what income was kept (income less spending) and its share, per currency."""
    found = c.result_of(results, c.cash_flow(intent.period)) or {}
    blocks = currencies(found)
    period = intent.period.text()
    if not blocks:
        return data_note(results) or f"I found no transactions in {period}."
    lines: list[Line] = []
    for block in blocks:
        cur, rate = block["currency"], block.get("savings_rate_pct")
        if rate is None:
            lines.append(f"- {md_text(cur)}: no income in {period}, so no savings rate.")
            continue
        kept = "kept" if dec(block.get("net")) >= 0 else "spent beyond your income"
        lines.append(
            f"- {md_text(cur)}: you {kept} net {signed(block['net'], cur)}, a savings rate of "
            f"**{md_text(rate)}%** of your income"
        )
    head = f"What you kept in {period} (income less spending after refunds, over income):"
    return [
        *_parts(lines_md([head, *lines])),
        "\n\n",
        *_parts(in_and_out(intent, results)),
    ]


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
