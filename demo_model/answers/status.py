"""Answers about where the user stands: budgets, balances, recurring payments, an overview."""

from __future__ import annotations

from datetime import date
from typing import Any

from demo_model import calls as c
from demo_model.answers.fmt import MAX_ROWS, currency_note, dec, lines_md, money, plural
from demo_model.answers.honest import NO_DATA, data_note
from demo_model.calls import Results
from demo_model.intent import Intent
from demo_model.subjects import currencies
from demo_model.vocabulary import names_term, names_topic


def budget(intent: Intent, results: Results) -> str:
    """Return where each budget (or the asked one) stands for the month."""
    status = c.result_of(results, c.budget(intent.period)) or {}
    month = _month_label(status.get("month", ""))
    rows = status.get("budgets") or []
    if not rows:
        return f"You have no budgets set for {month}." + (
            f" {data_note(results)}" if data_note(results) else ""
        )
    gone = f"{status.get('days_elapsed')} of {status.get('days_in_month')} days gone"
    head = f"Budgets for {month} ({gone}):"
    if intent.subject():
        asked = [r for r in rows if _is_asked(intent, str(r.get("category")))]
        if not asked:
            names = ", ".join(str(r.get("category")) for r in rows)
            return (
                f"You have no {intent.subject()} budget for {month}. Budgeted categories: {names}."
            )
        return lines_md([head, *(_budget_line(r) for r in asked)])
    over = [r for r in rows if r.get("status") == "over"]
    lines = [head]
    if over:
        lines.append(f"You are **over budget in {plural(len(over), 'category')}**:")
        lines += [_budget_line(r) for r in over]
    else:
        lines.append("You are within every budget.")
    rest = sorted(
        (r for r in rows if r.get("status") != "over"), key=lambda r: -dec(r.get("percent_used"))
    )
    if rest:
        lines.append("Closest to their limits:")
        lines += [_budget_line(r) for r in rest[:3]]
    return lines_md(lines)


def _is_asked(intent: Intent, name: str) -> bool:
    if intent.category:
        return names_topic(name, intent.category)
    return bool(intent.term) and names_term(name, intent.term or "")


def _budget_line(row: dict[str, Any]) -> str:
    cur = row["currency"]
    left = row.get("remaining")
    state = f"{money(left, cur)} over" if dec(left) < 0 else f"{money(left, cur)} left"
    line = (
        f"- {row['category']}: spent {money(row['spent'], cur)} of {money(row['limit'], cur)}"
        f" ({row.get('percent_used')}%), {state}"
    )
    other = row.get("not_counted_other_currencies") or []
    if other:
        spent = ", ".join(money(o["spent"], o["currency"]) for o in other)
        line += f"; {spent} also spent, not counted against this {cur} budget"
    return line + "."


def _month_label(text: str) -> str:
    try:
        return date.fromisoformat(f"{text}-01").strftime("%B %Y")
    except ValueError:
        return text or "this month"


def balances(intent: Intent, results: Results) -> str:
    """Return every account's balance and the totals per currency."""
    data = c.result_of(results, c.balances()) or {}
    accounts = data.get("accounts") or []
    if not accounts:
        return NO_DATA
    return lines_md(_balance_lines(data))


def _balance_lines(data: dict[str, Any]) -> list[str]:
    lines = ["Your accounts:"]
    for a in data.get("accounts") or []:
        owed = " owed" if a.get("kind") == "credit_card" and dec(a.get("balance")) < 0 else ""
        kind = str(a.get("kind", "")).replace("_", " ")
        lines.append(f"- {a['name']} ({kind}): {money(a['balance'], a['currency'])}{owed}")
    for t in data.get("totals") or []:
        sign = "minus " if dec(t.get("balance")) < 0 else ""
        lines.append(
            f"- **Total in {t['currency']}: {sign}{money(t['balance'], t['currency'])}** "
            f"({plural(int(t.get('accounts') or 0), 'account')})"
        )
    return lines + currency_note({str(t.get("currency")) for t in data.get("totals") or []})


def recurring(intent: Intent, results: Results) -> str:
    """Return the recurring payments found and their estimated monthly cost per currency."""
    found = c.result_of(results, c.recurring()) or {}
    items = found.get("recurring") or []
    if not items:
        note = data_note(results)
        return note or "I found no recurring payments in the last 12 months."
    active = [p for p in items if p.get("active")]
    lines = [f"I found {plural(len(active), 'active recurring payment')}:"]
    lines += [
        f"- {p['merchant']}: {money(p['typical_amount'], p['currency'])} {p['cadence']}, "
        f"next expected {p['next_expected_date']}"
        for p in active
    ]
    for total in found.get("estimated_monthly_total") or []:
        lines.append(
            f"Together about **{money(total['amount'], total['currency'])} a month** "
            f"in {total['currency']}."
        )
    stopped = [p for p in items if not p.get("active")]
    if stopped:
        lines.append("These look cancelled (no recent charge):")
        lines += [f"- {p['merchant']}, last charged {p['last_date']}" for p in stopped]
    return lines_md(lines)


def overview(intent: Intent, results: Results) -> str:
    """Return balances and the largest spending categories of the period."""
    data = c.result_of(results, c.balances()) or {}
    summary = c.result_of(results, c.top_categories(intent.period))
    if not data.get("accounts") and not currencies(summary):
        return NO_DATA
    lines = _balance_lines(data) if data.get("accounts") else []
    lines += ["", f"Your spending in {intent.period.text()}:"]
    for block in currencies(summary):
        cur = block["currency"]
        lines.append(f"- {cur}: **{money(block['total_spent'], cur)}** in total; largest:")
        lines += [
            f"  - {g['key']}: {money(g['spent'], cur)}"
            + (f" ({g['share_pct']}%)" if g.get("share_pct") is not None else "")
            for g in (block.get("groups") or [])[:MAX_ROWS]
        ]
    if not currencies(summary):
        lines.append("- No spending yet.")
    return lines_md(lines)
