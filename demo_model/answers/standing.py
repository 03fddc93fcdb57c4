"""Answers about where the user stands: budgets, balances, recurring payments, an overview."""

from __future__ import annotations

from datetime import date
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
    signed,
)
from demo_model.answers.honest import NO_DATA, data_note
from demo_model.answers.spending import group_lines, whole
from demo_model.cite import Answer, Line, Part
from demo_model.intent import Intent
from demo_model.mdtext import md_text
from demo_model.planner import subscriptions_category
from demo_model.subjects import currencies
from demo_model.tool_calls import Results
from demo_model.vocabulary import names_term, names_topic
from tools.finance.cites import account_title, budget_title, spend_source
from tools.finance.clock import days_in_month


def budget(intent: Intent, results: Results) -> Answer:
    """Return where each budget (or the asked one) stands for the month."""
    status = c.result_of(results, c.budget(intent.period)) or {}
    month = md_text(_month_label(status.get("month", "")))
    rows = status.get("budgets") or []
    if not rows:
        return f"You have no budgets set for {month}." + (
            f" {data_note(results)}" if data_note(results) else ""
        )
    gone = md_text(f"{status.get('days_elapsed')} of {status.get('days_in_month')} days gone")
    head = f"Budgets for {month} ({gone}):"
    if intent.subject():
        asked = [r for r in rows if _is_asked(intent, str(r.get("category")))]
        if not asked:
            names = ", ".join(md_text(r.get("category")) for r in rows)
            asked_for = md_text(intent.subject())
            return f"You have no {asked_for} budget for {month}. Budgeted categories: {names}."
        return lines_md([head, *(_budget_line(r, status) for r in asked)])
    over = [r for r in rows if r.get("status") == "over"]
    lines: list[Line] = [head]
    if over:
        lines.append(f"You are **over budget in {plural(len(over), 'category')}**:")
        lines += [_budget_line(r, status) for r in over]
    else:
        lines.append("You are within every budget.")
    rest = sorted(
        (r for r in rows if r.get("status") != "over"), key=lambda r: -dec(r.get("percent_used"))
    )
    if rest:
        lines.append("Closest to their limits:")
        lines += [_budget_line(r, status) for r in rest[:3]]
    return lines_md(lines)


def _is_asked(intent: Intent, name: str) -> bool:
    if intent.category:
        return names_topic(name, intent.category)
    return bool(intent.term) and names_term(name, intent.term or "")


def _budget_line(row: dict[str, Any], status: dict[str, Any]) -> Line:
    cur, name, month = row["currency"], str(row["category"]), str(status.get("month"))
    left = row.get("remaining")
    state = f"{money(left, cur)} over" if dec(left) < 0 else f"{money(left, cur)} left"
    parts: list[Part] = [
        f"- {md_text(name)}: ",
        cite(f"spent {money(row['spent'], cur)}", _month_spend(name, month, row["spent"])),
        " of ",
        cite(money(row["limit"], cur), [budget_title(name, month, row["limit"], cur)]),
        f" ({md_text(row.get('percent_used'))}%), {state}",
    ]
    for k, o in enumerate(row.get("not_counted_other_currencies") or []):
        spent = money(o["spent"], o["currency"])
        parts += ["; " if k == 0 else ", ", cite(spent, _month_spend(name, month, o["spent"]))]
    if row.get("not_counted_other_currencies"):
        parts.append(f" also spent, not counted against this {md_text(cur)} budget")
    return (*parts, ".")


def _month_spend(category: str, month: str, spent: Any) -> list[str]:
    """Return the source of a category's spending in a month (none when nothing was spent)."""
    if dec(spent) == 0:
        return []
    first = date.fromisoformat(f"{month}-01")
    last = first.replace(day=days_in_month(first.year, first.month))
    return [spend_source(category, first, last)]


def _month_label(text: str) -> str:
    try:
        return date.fromisoformat(f"{text}-01").strftime("%B %Y")
    except ValueError:
        return text or "this month"


def balances(intent: Intent, results: Results) -> Answer:
    """Return every account's balance and the totals per currency."""
    data = c.result_of(results, c.balances()) or {}
    accounts = data.get("accounts") or []
    if not accounts:
        return NO_DATA
    return lines_md(_balance_lines(data))


def _balance_lines(data: dict[str, Any]) -> list[Line]:
    lines: list[Line] = ["Your accounts:"]
    titles: dict[str, list[str]] = {}
    for a in data.get("accounts") or []:
        negative = dec(a.get("balance")) < 0
        owed = (" owed" if a.get("kind") == "credit_card" else " overdrawn") if negative else ""
        kind = md_text(str(a.get("kind", "")).replace("_", " "))
        title = account_title(a["name"], a["kind"], a["balance"], a["currency"])
        titles.setdefault(a["currency"], []).append(title)
        shown = cite(signed(a["balance"], a["currency"]), [title])
        lines.append((f"- {md_text(a['name'])} ({kind}): ", shown, owed))
    for t in data.get("totals") or []:
        total = f"**Total in {md_text(t['currency'])}: {signed(t['balance'], t['currency'])}**"
        # The total cites every account it adds up, or none when the list was cut.
        every = [] if data.get("truncated") else titles.get(t["currency"], [])
        accounts = plural(int(t.get("accounts") or 0), "account")
        lines.append(("- ", cite(total, every), f" ({accounts})"))
    return lines + currency_note({str(t.get("currency")) for t in data.get("totals") or []})


def recurring(intent: Intent, results: Results) -> Answer:
    """Return the recurring payments found, their monthly cost, and the money coming in."""
    found = c.result_of(results, c.recurring()) or {}
    items = found.get("recurring") or []
    if not items:
        note = data_note(results)
        return note or f"I found no recurring payments in {_history(found)}."
    active = [p for p in items if p.get("active") and p.get("direction") == "out"]
    lines: list[Line] = []
    if dict(intent.details).get("only") == "subscriptions":
        # Subscriptions first, with their own total; rent, bills and the rest apart.
        name = subscriptions_category(found)
        subs = [p for p in active if name and p.get("category") == name]
        lines.append(f"Your subscriptions ({len(subs)}):" if subs else "I found no subscriptions.")
        lines += [series_line(p) for p in subs]
        mine = c.result_of(results, c.recurring(category=name, direction="out")) if name else None
        lines += _monthly(mine, "estimated_monthly_total", "for your subscriptions")
        others = [p for p in active if p not in subs]
        if others:
            lines.append("Other recurring payments, not subscriptions (rent, bills and the like):")
            lines += [series_line(p) for p in others]
    else:
        lines.append(
            f"I found {plural(len(active), 'active recurring payment')} in {_history(found)}:"
        )
        lines += [series_line(p) for p in active]
        lines += _monthly(found, "estimated_monthly_total", "")
    income = [p for p in items if p.get("active") and p.get("direction") == "in"]
    if income:
        lines.append("Money coming in regularly:")
        lines += [series_line(p) for p in income]
        lines += _monthly(found, "estimated_monthly_income", "coming in")
    stopped = [p for p in items if not p.get("active")]
    if stopped:
        lines.append("These look cancelled (no recent charge):")
        lines += [
            f"- {md_text(p['name'])}, last charged {md_text(p['last_date'])}" for p in stopped
        ]
    return lines_md(lines)


def _history(found: dict[str, Any]) -> str:
    period = found.get("period") or {}
    return md_text(
        f"{period.get('label', 'your history')} ({period.get('from')} to {period.get('to')})"
    )


def _monthly(found: Any, key: str, what: str) -> list[Line]:
    totals = (found or {}).get(key) or [] if isinstance(found, dict) else []
    words = f" {what}" if what else ""
    return [
        f"Together about **{money(t['amount'], t['currency'])} a month**{words} "
        f"in {md_text(t['currency'])}."
        for t in totals
    ]


def series_line(p: dict[str, Any]) -> Line:
    """One recurring series: its last charge (cited: its rows), cadence and next date."""
    cur = p["currency"]
    source = c.series_source(p)
    varies = " (it varies)" if p.get("amount_varies") else ""
    moved = "".join(
        f", {'up' if dec(c['to']) > dec(c['from']) else 'down'} from {money(c['from'], cur)} "
        f"since {md_text(_month_label(str(c['since'])[:7]))}"
        for c in p.get("price_changes") or []
    )
    return (
        f"- {md_text(p['name'])}: ",
        cite(f"{money(p['last_amount'], cur)} {md_text(p['cadence'])}", [source]),
        f"{varies}{moved}, next expected {md_text(p['next_expected_date'])}",
    )


def overview(intent: Intent, results: Results) -> Answer:
    """Return balances and the largest spending categories of the period."""
    data = c.result_of(results, c.balances()) or {}
    # Every category, not the top few: the total cites all of their rows.
    summary = c.result_of(results, c.by_category(intent.period))
    if not data.get("accounts") and not currencies(summary):
        return NO_DATA
    lines = _balance_lines(data) if data.get("accounts") else []
    lines += ["", f"Your spending in {intent.period.text()}:"]
    for block in currencies(summary):
        cur = block["currency"]
        total = cite(f"**{money(block['total_spent'], cur)}**", whole(block, intent.period))
        lines.append((f"- {md_text(cur)}: ", total, " in total; largest:"))
        lines += group_lines(block, intent.period, MAX_ROWS)
    if not currencies(summary):
        lines.append("- No spending yet.")
    return lines_md(lines)
