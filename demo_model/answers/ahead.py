"""Answers about what lies ahead: a balance on a day, the bills due, a series' next payment and
the prices that moved. Every figure is a tool's; each cites the rows it rests on."""

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
from demo_model.answers.standing import series_line
from demo_model.cite import Answer, Line, Part
from demo_model.intent import Intent
from demo_model.mdtext import md_text
from demo_model.planner import transfer_calls
from demo_model.tool_calls import Results
from demo_model.vocabulary import names_term, names_topic
from tools.finance.cites import account_title, series_title, txn_source, txns_source

LISTED_SERIES = 8  # the series a forecast lists with their amounts; the others by name


def forecast(intent: Intent, results: Results) -> Answer:
    """Return each account's balance today and as projected on the day asked."""
    day = dict(intent.details)["date"]
    found = c.result_of(results, c.forecast(day)) or {}
    accounts = found.get("accounts") or []
    if not accounts:
        return data_note(results) or "I don't see any accounts to project a balance for."
    said = md_text(intent.period.label)
    when = md_text(day)
    named = f"{when} ({said})" if said != when else when
    lines: list[Line] = [
        f"Your balances projected to {named}, from today's posted balances, the pending "
        "transactions and your active recurring payments and income:"
    ]
    listed = 0
    titles: dict[str, list[str]] = {}
    for a in accounts:
        cur = a["currency"]
        title = account_title(a["name"], a["kind"], a["balance_today"], cur)
        titles.setdefault(cur, []).append(title)
        lines.append(
            (
                f"- {md_text(a['name'])}: today ",
                cite(signed(a["balance_today"], cur), [title]),
                f", expected on {when}: **{signed(a['projected_balance'], cur)}**",
            )
        )
        if a.get("pending_ids") and dec(a.get("pending")) != 0:
            refs = [txn_source(int(i)) for i in a["pending_ids"]]
            lines.append(("  - pending, still to post: ", cite(signed(a["pending"], cur), refs)))
        for s in a.get("series") or []:
            listed += 1
            lines.append(_series(s, cur, listed <= LISTED_SERIES))
    for t in found.get("totals") or []:
        cur = t["currency"]
        lines.append(
            (
                f"**All your {md_text(cur)} accounts on {when}: about "
                f"{signed(t['projected_balance'], cur)}** (today ",
                cite(signed(t["balance_today"], cur), titles.get(cur, [])),
                ").",
            )
        )
    names = ", ".join(md_text(s["name"]) for s in found.get("series_used") or [])
    if names:
        lines.append(f"Recurring series used: {names}.")
    lines.append(
        "A projection, not a promise: one-off spending and anything new are not in it, and a "
        "negative balance is money owed or an overdraft."
    )
    return lines_md(
        lines + currency_note({str(t.get("currency")) for t in found.get("totals") or []})
    )


def _series(s: dict[str, Any], cur: str, with_amount: bool) -> Line:
    times = len(s.get("dates") or [])
    way = "in" if dec(s["amount_each"]) > 0 else "out"
    head = f"  - {md_text(s['name'])} ({md_text(s['cadence'])}, {plural(times, 'time')}): "
    if not with_amount:
        return f"{head}{way}"
    if s.get("amount_varies"):
        return f"{head}about {money(s['amount_each'], cur)} {way} each time"
    return (head, cite(money(s["amount_each"], cur), [s["source"]]), f" {way} each time")


def upcoming(intent: Intent, results: Results) -> Answer:
    """Return the recurring payments due in the days ahead, oldest first, and their total."""
    days = int(dict(intent.details)["days"])
    found = c.result_of(results, c.upcoming(days)) or {}
    bills = found.get("bills") or []
    period = md_text(f"{intent.period.label} ({intent.period.start} to {intent.period.end})")
    if not bills:
        return data_note(results) or f"I don't expect any recurring payments in {period}."
    lines: list[Line] = [f"Payments expected in {period}, from your recurring payments:"]
    for b in bills:
        cur = b["currency"]
        head = f"- {md_text(b['date'])}: {md_text(b['name'])}, "
        if b.get("amount_varies"):
            lines.append(f"{head}about {money(b['amount'], cur)}")
        else:
            title = series_title(b["name"], b["cadence"], b["amount"], cur)
            lines.append((head, cite(money(b["amount"], cur), [title])))
    for t in found.get("totals") or []:
        if t.get("direction") == "out":
            lines.append(f"In all {money(t['amount'], t['currency'])} going out.")
    return lines_md(lines + currency_note({str(b.get("currency")) for b in bills}))


def next_payment(intent: Intent, results: Results) -> Answer:
    """Return when the series the question names comes next, and how much it should be."""
    found = c.result_of(results, c.recurring()) or {}
    items = [p for p in found.get("recurring") or [] if p.get("active")]
    income = bool(dict(intent.details).get("income"))
    asked = intent.subject()
    chosen = [p for p in items if _named(p, intent)] if asked else []
    if not asked and income:
        chosen = [p for p in items if p.get("direction") == "in"]
    if not chosen:
        what = md_text(asked or ("income" if income else "payment"))
        names = ", ".join(md_text(p["name"]) for p in items[:10])
        listed = f" Your recurring series: {names}." if names else ""
        return f"I found no recurring {what} to tell the next date of.{listed}"
    lines: list[Line] = []
    for p in chosen[:3]:
        cur = p["currency"]
        way = "comes in" if p.get("direction") == "in" else "is due"
        amount: Part = (
            f"about {money(p['next_expected_amount'], cur)}"
            if p.get("amount_varies")
            else cite(f"**{money(p['next_expected_amount'], cur)}**", [c.series_source(p)])
        )
        lines.append(
            (
                f"Your next {md_text(p['name'])} payment {way} on "
                f"**{md_text(p['next_expected_date'])}**: ",
                amount,
                f" ({md_text(p['cadence'])}; last on {md_text(p['last_date'])}).",
            )
        )
    return lines_md(lines)


def _named(p: dict[str, Any], intent: Intent) -> bool:
    names = [str(p.get(k) or "") for k in ("name", "merchant", "category")]
    if intent.category:
        return any(names_topic(n, intent.category) for n in names)
    return any(names_term(n, intent.term or "") for n in names)


def price_changes(intent: Intent, results: Results) -> Answer:
    """Return the recurring payments (and income) whose price moved, with when."""
    found = c.result_of(results, c.recurring()) or {}
    items = found.get("recurring") or []
    if intent.subject():
        items = [p for p in items if _named(p, intent)]
    moved = [p for p in items if p.get("price_changes")]
    period = md_text((found.get("period") or {}).get("label", "your history"))
    if not moved:
        what = f" for {md_text(intent.subject())}" if intent.subject() else ""
        return data_note(results) or f"No recurring payment changed price{what} in {period}."
    lines: list[Line] = [f"Price changes in your recurring payments ({period}):"]
    lines += [series_line(p) for p in moved]
    return lines_md(lines + currency_note({str(p.get("currency")) for p in moved}))


def transfers(intent: Intent, results: Results) -> Answer:
    """Return the money moved between the user's own accounts: out of them, into them."""
    period = intent.period.text()
    about = f" (matching “{md_text(intent.term)}”)" if intent.term else ""
    lines: list[Line] = [f"Transfers between your own accounts{about} in {period}:"]
    rows: list[dict[str, Any]] = []
    for call, way in zip(transfer_calls(intent), ("moved out of", "moved into"), strict=True):
        found = c.result_of(results, call) or {}
        rows += found.get("transactions") or []
        for t in found.get("totals") or []:
            figure = cite(f"**{money(t['net'], t['currency'])}**", [txns_source(call[1])])
            count = plural(int(t["count"]), "transfer")
            lines.append((f"- {md_text(t['currency'])}: ", figure, f" {way} an account ({count})"))
    if not rows:
        return f"I found no transfers between your own accounts{about} in {period}."
    rows.sort(key=lambda r: (r.get("date", ""), r.get("id", 0)), reverse=True)
    lines += ["", "The latest:", *(row_line(r, refund=False) for r in rows[:LISTED_SERIES])]
    lines.append("They are neither spending nor income: the money stays yours.")
    return lines_md(lines + currency_note({str(r.get("currency")) for r in rows}))
