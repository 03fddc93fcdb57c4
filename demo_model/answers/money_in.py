"""Answers about money coming in: income, and refunds of spending."""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from typing import Any

from demo_model import tool_calls as c
from demo_model.answers.fmt import (
    MAX_ROWS,
    cite,
    currency_note,
    dec,
    lines_md,
    money,
    plural,
    row_line,
)
from demo_model.answers.honest import data_note, latest_note
from demo_model.answers.spending import unmatched
from demo_model.cite import Answer, Line
from demo_model.intent import Intent
from demo_model.mdtext import md_text
from demo_model.planner import income_categories, refund_categories, spending_subject
from demo_model.subjects import Subject, group_keys
from demo_model.tool_calls import Call, Results
from demo_model.vocabulary import is_transfer
from tools.finance.cites import txn_source, txns_source

LISTED = MAX_ROWS * 2


def income(intent: Intent, results: Results) -> Answer:
    """Return the money that came in to income categories, per currency and category."""
    period = intent.period.text()
    names = income_categories(intent, results) or []
    found = c.result_of(results, c.inflows(intent.period)) or {}
    if not names:
        if note := data_note(results):
            return note
        return f"I found no income in {period}.{_other_money_in(found)}{latest_note(results)}"
    per: dict[str, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for name in names:
        totals = c.result_of(results, c.money_in(intent.period, {"category": name})) or {}
        for total in totals.get("totals") or []:
            per[total["currency"]].append((name, total))
    lines: list[Line] = [f"Your income in {period}:"]
    # Each category's money in rests on its rows coming in (the call that totalled them).
    came_in = {n: txns_source(c.money_in(intent.period, {"category": n})[1]) for n in names}
    for cur, rows in sorted(per.items()):
        whole = sum((dec(t["money_in"]) for _, t in rows), Decimal(0))
        total = cite(f"**{money(f'{whole:.2f}', cur)}**", [came_in[n] for n, _ in rows])
        lines.append((f"- {md_text(cur)}: ", total, " in total"))
        lines += [
            (
                f"  - {md_text(name)}: ",
                cite(money(t["money_in"], cur), [came_in[name]]),
                f" ({plural(int(t['count']), 'payment')})",
            )
            for name, t in rows
        ]
    paid = [r for r in found.get("transactions") or [] if r.get("category") in names]
    lines += ["", "Payments in:", *(row_line(r, True, refund=False) for r in paid[:LISTED])]
    if len(paid) > LISTED:
        lines.append(f"- and {len(paid) - LISTED} more")
    lines += ["", _not_counted(found, names)]
    if found.get("has_more"):
        lines.append(f"(I read the first {found.get('returned')} incoming transactions.)")
    return lines_md(lines + currency_note(set(per)))


def _not_counted(found: dict[str, Any], names: list[str]) -> str:
    skipped = sorted(
        {str(r.get("category")) for r in found.get("transactions") or []} - set(names) - {"None"}
    )
    moved = [n for n in skipped if is_transfer(n)]
    text = "Not counted as income: refunds of spending"
    if moved:
        text += f" and transfers between your own accounts ({', '.join(map(md_text, moved))})"
    return text + "."


def _other_money_in(found: dict[str, Any]) -> str:
    kinds = {str(r.get("category")) for r in found.get("transactions") or []}
    if not kinds:
        return ""
    named = ", ".join(md_text(k) for k in sorted(kinds))
    return f" Money did come in, but only as {named}, which is not income."


def refunds(intent: Intent, results: Results) -> Answer:
    """Return the refunds of spending in the period (of one category or merchant, or all)."""
    summary = c.result_of(results, c.by_category(intent.period))
    period = intent.period.text()
    if not group_keys(summary):
        return data_note(results) or f"I found no refunds in {period}.{latest_note(results)}"
    subject = spending_subject(intent, results) or Subject("all")
    if subject.kind == "unmatched":
        return unmatched(intent, subject, group_keys(summary))
    spend = set(group_keys(summary))
    if subject.kind == "all":
        found = c.result_of(results, c.inflows(intent.period)) or {}
        names = refund_categories(intent, results) or []
        calls = [c.refunds(intent.period, {"category": n}) for n in names]
    else:
        calls = [c.refunds(intent.period, subject.where())]
        found = c.result_of(results, calls[0]) or {}
    rows = [r for r in found.get("transactions") or [] if r.get("category") in spend]
    about = f" ({md_text(subject.title())})" if subject.kind != "all" else ""
    if not rows:
        return f"I found no refunds{about} in {period}."
    back = _money_back(results, calls, spend) or _rows_back(rows)
    lines: list[Line] = [f"Your refunds{about} in {period}:"]
    lines += [
        (
            f"- {md_text(cur)}: ",
            cite(f"**{money(f'{total:.2f}', cur)}** back", refs),
            f", {plural(count, 'refund')}",
        )
        for cur, (total, count, refs) in sorted(back.items())
    ]
    lines += ["", *(row_line(r, with_category=subject.kind != "category") for r in rows)]
    if found.get("has_more"):
        lines.append(f"(I read the first {found.get('returned')} incoming transactions.)")
    lines += ["", "Refunds are already taken off your spending totals."]
    return lines_md(lines + currency_note(set(back)))


# Per currency: money back, how many refunds, and the search results that add up to it.
Back = dict[str, tuple[Decimal, int, list[str]]]


def _money_back(results: Results, calls: list[Call], spend: set[str]) -> Back | None:
    """Return the refunds as the calls' totals count them, or None when those are not refunds.

    A call's totals are only refunds when every match is: its category is a spending one, or
    it read all its matches and each is in a spending category (a merchant also pays in).
    """
    out: Back = {}
    for call in calls:
        result = c.result_of(results, call)
        if not isinstance(result, dict):
            return None
        rows = result.get("transactions") or []
        every = not result.get("has_more") and all(r.get("category") in spend for r in rows)
        if call[1].get("category") not in spend and not every:
            return None
        for t in result.get("totals") or []:
            if dec(t.get("money_in")) > 0:
                total, count, refs = out.get(t["currency"], (Decimal(0), 0, []))
                refs = [*refs, txns_source(call[1])]
                out[t["currency"]] = (total + dec(t["money_in"]), count + int(t["count"]), refs)
    return out or None


def _rows_back(rows: list[dict[str, Any]]) -> Back:
    """Return the refunds as the rows read add up, each row citing itself."""
    out: Back = {}
    for row in rows:
        total, count, refs = out.get(str(row["currency"]), (Decimal(0), 0, []))
        refs = [*refs, txn_source(row["id"])]
        out[str(row["currency"])] = (total + dec(row["amount"]), count + 1, refs)
    return out
