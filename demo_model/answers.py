"""Write the demo model's final answer from the tool results it received."""

from __future__ import annotations

from typing import Any

from demo_model.plans import Plan, Results, groups_of

MAX_ROWS = 6


def compose_answer(plan: Plan, results: Results) -> str:
    """Return a short answer quoting the exact figures the tools returned."""
    errors = [
        f"- {name}: {r['error']}" for name, _, r in results if isinstance(r, dict) and "error" in r
    ]
    if errors:
        return "I could not get all of the data I needed:\n" + "\n".join(errors)
    by_name = {name: result for name, _, result in results if isinstance(result, dict)}
    if plan.kind == "category":
        return _category(plan, by_name)
    writers = {
        "budget": _budget,
        "compare": _compare,
        "recurring": _recurring,
        "balances": _balances,
        "overview": _overview,
    }
    try:
        return writers[plan.kind](plan, by_name)
    except (KeyError, TypeError, ValueError):
        return "\n".join(f"{name}: {result}" for name, result in by_name.items())


def money(amount: Any, currency: str) -> str:
    """Format a decimal-string amount with its currency, exactly as the tool gave it."""
    return f"{amount} {currency}"


def _category(plan: Plan, r: dict[str, Any]) -> str:
    summary = r.get("get_spending_summary") or {}
    word = plan.category or "that category"
    for cur in summary.get("currencies") or []:
        for group in cur.get("groups") or []:
            if word[:5] in str(group.get("key", "")).lower():
                lines = [
                    f"You spent **{money(group['spent'], cur['currency'])}** on "
                    f"{group['key']} in {plan.period.label}, across {group['count']} "
                    f"transactions: {group['share_pct']}% of your "
                    f"{money(cur['total_spent'], cur['currency'])} total spending."
                ]
                rows = (r.get("get_transactions") or {}).get("transactions") or []
                if rows:
                    lines.append("\nThe largest were:")
                    lines += [
                        f"- {t['date']}: {t['merchant']}, "
                        f"{money(t['amount'].lstrip('-'), t['currency'])}"
                        for t in rows[:MAX_ROWS]
                    ]
                return "\n".join(lines)
    return f"I found no {word} spending in {plan.period.label}."


def _budget(plan: Plan, r: dict[str, Any]) -> str:
    status = r["get_budget_status"]
    budgets = status.get("budgets") or []
    if not budgets:
        return f"You have no budgets set for {plan.period.label}."
    over = [b for b in budgets if b["status"] == "over"]
    lines = [
        f"For {plan.period.label} ({status.get('days_elapsed')} of "
        f"{status.get('days_in_month')} days gone):"
    ]
    if over:
        lines.append(
            f"You are **over budget in {len(over)} categor{'y' if len(over) == 1 else 'ies'}**:"
        )
        lines += [
            f"- {b['category']}: spent {money(b['spent'], b['currency'])} of "
            f"{money(b['limit'], b['currency'])} ({b['percent_used']}%)"
            for b in over
        ]
    else:
        lines.append("You are within every budget.")
    close = sorted(
        (b for b in budgets if b["status"] != "over"), key=lambda b: -float(b["percent_used"])
    )[:3]
    if close:
        lines.append("Closest to their limits:")
        lines += [
            f"- {b['category']}: {b['percent_used']}% used, "
            f"{money(b['remaining'], b['currency'])} left"
            for b in close
        ]
    return "\n".join(lines)


def _compare(plan: Plan, r: dict[str, Any]) -> str:
    data = r["compare_spending"]
    a, b = data["period_a"], data["period_b"]
    lines = [
        f"Spending from {b['start_date']} to {b['end_date']} against "
        f"{a['start_date']} to {a['end_date']}:"
    ]
    for cur in data.get("currencies") or []:
        c = cur["currency"]
        pct = f" ({cur['change_pct']}%)" if cur.get("change_pct") is not None else ""
        lines.append(
            f"- Total: {money(cur['period_b'], c)} vs {money(cur['period_a'], c)}, "
            f"a change of {money(cur['change'], c)}{pct}."
        )
        moves = sorted(cur.get("categories") or [], key=lambda x: -abs(float(x["change"])))
        lines += [
            f"- {m['category']}: {money(m['period_b'], c)} vs {money(m['period_a'], c)} "
            f"({money(m['change'], c)})"
            for m in moves[:MAX_ROWS]
        ]
    return "\n".join(lines)


def _recurring(plan: Plan, r: dict[str, Any]) -> str:
    rows = r["find_recurring_payments"].get("recurring") or []
    if not rows:
        return "I found no recurring payments."
    lines = [f"I found {len(rows)} recurring payments:"]
    lines += [
        f"- {p['merchant']}: {money(p['typical_amount'], p['currency'])} {p['cadence']}, "
        f"next expected {p['next_expected_date']}"
        for p in rows
    ]
    return "\n".join(lines)


def _balances(plan: Plan, r: dict[str, Any]) -> str:
    data = r["get_account_balances"]
    lines = ["Your accounts:"]
    lines += [
        f"- {a['name']} ({a['kind'].replace('_', ' ')}): {money(a['balance'], a['currency'])}"
        for a in data.get("accounts") or []
    ]
    lines += [
        f"- **Total in {t['currency']}: {money(t['balance'], t['currency'])}**"
        for t in data.get("totals") or []
    ]
    return "\n".join(lines)


def _overview(plan: Plan, r: dict[str, Any]) -> str:
    lines = [_balances(plan, r), "", f"Your biggest spending in {plan.period.label}:"]
    summary = r.get("get_spending_summary") or {}
    for cur in summary.get("currencies") or []:
        lines += [
            f"- {g['key']}: {money(g['spent'], cur['currency'])} ({g['share_pct']}%)"
            for g in groups_of(cur)[:MAX_ROWS]
        ]
    return "\n".join(lines)
