"""Answers about money coming in: income, and refunds of spending, by the one money rule.

Income is every inflow that is neither a refund nor a transfer between the user's accounts,
categorised or not (get_cash_flow counts it); a refund is money back for spending.
"""

from __future__ import annotations

from typing import Any

from demo_model import tool_calls as c
from demo_model.answers.fmt import cite, currency_note, dec, lines_md, money, plural, row_line
from demo_model.answers.honest import data_note, latest_note
from demo_model.answers.spending import unmatched
from demo_model.cite import Answer, Line, Part
from demo_model.intent import Intent
from demo_model.mdtext import md_text
from demo_model.planner import spending_subject
from demo_model.subjects import Subject, currencies, group_keys
from demo_model.tool_calls import Results
from tools.finance.cites import txns_source


def flow_source(intent: Intent, flow: str, category: str | None = None) -> str:
    """Return the source of one flow's rows over the intent's period (of one category)."""
    where: dict[str, Any] = {**intent.period.span(), "category": category, "flow": flow}
    return txns_source(where)


def income(intent: Intent, results: Results) -> Answer:
    """Return the money that came in as income, per currency and category, and its payments."""
    period = intent.period.text()
    found = c.result_of(results, c.cash_flow(intent.period)) or {}
    blocks = [b for b in currencies(found) if dec(b.get("income")) > 0]
    if not blocks:
        if note := data_note(results):
            return note
        return f"I found no income in {period}.{latest_note(results)}"
    lines: list[Line] = [f"Your income in {period}:"]
    for block in blocks:
        cur = block["currency"]
        total = cite(f"**{money(block['income'], cur)}**", [flow_source(intent, "income")])
        lines.append(
            (
                f"- {md_text(cur)}: ",
                total,
                f" in total ({plural(block['income_count'], 'payment')})",
            )
        )
        lines += [
            (
                f"  - {md_text(part['category'])}: ",
                cite(money(part["amount"], cur), [flow_source(intent, "income", part["category"])]),
                f" ({plural(int(part['count']), 'payment')})",
            )
            for part in block.get("income_by_category") or []
        ]
    rows = (c.result_of(results, c.income_rows(intent.period)) or {}).get("transactions") or []
    if rows:
        lines += ["", "Payments in:", *(row_line(r, True, refund=False) for r in rows)]
        count = (c.result_of(results, c.income_rows(intent.period)) or {}).get("count") or 0
        if count > len(rows):
            lines.append(f"- and {count - len(rows)} more")
    lines += ["", _not_counted(intent, blocks)]
    return lines_md(lines + currency_note({str(b["currency"]) for b in blocks}))


def _not_counted(intent: Intent, blocks: list[dict[str, Any]]) -> Line:
    """What came in but is not income: refunds of spending, moves between own accounts."""
    parts: list[Part] = ["Not counted as income: refunds of spending"]
    back = [b for b in blocks if dec(b.get("refunds")) > 0]
    for k, block in enumerate(back):
        cur = block["currency"]
        figure = cite(money(block["refunds"], cur), [flow_source(intent, "refund")])
        parts += [" (" if k == 0 else ", ", figure]
    if back:
        parts.append(")")
    parts.append(", and transfers between your own accounts.")
    return tuple(parts)


def refunds(intent: Intent, results: Results) -> Answer:
    """Return the refunds of spending in the period (of one category or merchant, or all)."""
    summary = c.result_of(results, c.by_category(intent.period))
    period = intent.period.text()
    if not group_keys(summary):
        return data_note(results) or f"I found no refunds in {period}.{latest_note(results)}"
    subject = spending_subject(intent, results) or Subject("all")
    if subject.kind == "unmatched":
        return unmatched(intent, subject, group_keys(summary))
    call = c.refunds(intent.period, subject.where())
    found = c.result_of(results, call) or {}
    rows = found.get("transactions") or []
    about = f" ({md_text(subject.title())})" if subject.kind != "all" else ""
    if not rows:
        return f"I found no refunds{about} in {period}."
    source = txns_source(call[1])
    lines: list[Line] = [f"Your refunds{about} in {period}:"]
    lines += [
        (
            f"- {md_text(t['currency'])}: ",
            cite(f"**{money(t['money_in'], t['currency'])}** back", [source]),
            f", {plural(int(t['count']), 'refund')}",
        )
        for t in found.get("totals") or []
    ]
    lines += ["", *(row_line(r, with_category=subject.kind != "category") for r in rows)]
    if found.get("has_more"):
        lines.append(f"- and {found['count'] - len(rows)} more")
    lines += ["", "Refunds are already taken off your spending totals."]
    return lines_md(lines + currency_note({str(t["currency"]) for t in found.get("totals") or []}))
