"""Which tool calls the demo model still needs, given its intent and the results it has."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from demo_model import tool_calls as c
from demo_model.categorize_rows import plan_categorize
from demo_model.change_plans import plan_change
from demo_model.intent import Intent
from demo_model.subjects import Subject, compared_categories, currencies, group_keys, resolve
from demo_model.tool_calls import Call, Results
from demo_model.vocabulary import category_in


def next_calls(intent: Intent, results: Results) -> list[Call]:
    """Return the next round of tool calls, or [] when the answer can be written."""
    if any(isinstance(r, dict) and "error" in r for _, _, r in results):
        return []
    planners = {
        "spending": _spending,
        "compare": _compare,
        "largest": _largest,
        "budget": _budget,
        "recurring": _recurring,
        "income": _income,
        "refunds": _refunds,
        "set_budget": _change,
        "categorize": _change,
        "categorize_rows": lambda i, r: plan_categorize(
            i.period.end, "imported" in dict(i.details), r
        ),
        "chart": _chart,
        "place": lambda i, r: c.missing(r, [c.by_category(i.period)]),
        "average": _average,
        "merchants": _merchants,
        "in_and_out": _in_and_out,
        "savings_rate": _in_and_out,
        "pending": lambda i, r: c.missing(r, [c.pending()]),
        "forecast": lambda i, r: c.missing(r, [c.forecast(dict(i.details)["date"])]),
        "upcoming": lambda i, r: c.missing(r, [c.upcoming(int(dict(i.details)["days"]))]),
        "next_payment": lambda i, r: c.missing(r, [c.recurring()]),
        "price_changes": lambda i, r: c.missing(r, [c.recurring()]),
        "transfers": lambda i, r: c.missing(r, transfer_calls(i)),
        "balances": lambda i, r: c.missing(r, [c.balances()]),
        "overview": lambda i, r: c.missing(r, [c.balances(), c.by_category(i.period)]),
    }
    plan = planners.get(intent.kind)
    return plan(intent, results) if plan else []


def spending_subject(intent: Intent, results: Results) -> Subject | None:
    """Return the subject of a spending question once the summaries are in, else None."""
    summary = c.result_of(results, c.by_category(intent.period))
    if summary is None:
        return None
    merchants = None
    if intent.term and not intent.category:
        found = c.result_of(results, c.by_merchant(intent.period))
        if found is None:
            return None
        merchants = group_keys(found)
    return resolve(intent, group_keys(summary), merchants)


def compare_subject(intent: Intent, results: Results) -> Subject | None:
    """Return a comparison's subject once the names it may match are in, else None."""
    found = c.result_of(results, c.compare(intent.period, intent.baseline or intent.period))
    if found is None:
        return None
    merchants = None
    if intent.term and not intent.category:
        summaries = [c.result_of(results, call) for call in _merchant_calls(intent)]
        if any(s is None for s in summaries):
            return None
        merchants = list(dict.fromkeys(k for s in summaries for k in group_keys(s)))
    return resolve(intent, compared_categories(found), merchants)


def _merchant_calls(intent: Intent) -> list[Call]:
    """Spend per merchant in both compared periods: the names a comparison's term can match."""
    return [c.by_merchant(p) for p in (intent.baseline or intent.period, intent.period)]


def has_refunds(result: Any) -> bool:
    """Return whether a get_transactions result counted any money coming back."""
    totals = result.get("totals") if isinstance(result, dict) else None
    return any(Decimal(t.get("money_in") or "0") > 0 for t in totals or [])


def _subject(intent: Intent, results: Results) -> tuple[list[Call], Any]:
    """The first round's calls still to make, or else the subject the question names."""
    if todo := _first_round(intent, results):
        return todo, None
    if not currencies(c.result_of(results, c.by_category(intent.period))):
        return c.missing(results, c.any_data()), None
    subject = spending_subject(intent, results)
    if subject is None or subject.kind == "unmatched":
        return [], None
    return [], subject


def _spending(intent: Intent, results: Results) -> list[Call]:
    todo, subject = _subject(intent, results)
    if subject is None:
        return todo
    if subject.kind == "all":
        # The refunds already taken off the totals, listed.
        return c.missing(results, [c.refunds(intent.period, {})])
    listed = c.rows(intent.period, subject.where())
    if todo := c.missing(results, [listed]):
        return todo
    if has_refunds(c.result_of(results, listed)):
        # Its refunds listed, and its money out totalled: the charged figure the answer cites.
        where, period = subject.where(), intent.period
        return c.missing(results, [c.refunds(period, where), c.charges(period, where)])
    return []


def _income(intent: Intent, results: Results) -> list[Call]:
    """Income by the money rule (categorised or not) and its first payments."""
    if todo := c.missing(results, [c.cash_flow(intent.period), c.income_rows(intent.period)]):
        return todo
    found = c.result_of(results, c.income_rows(intent.period))
    if not (found or {}).get("count") and not currencies(
        c.result_of(results, c.cash_flow(intent.period))
    ):
        return c.missing(results, c.any_data())
    return []


def _refunds(intent: Intent, results: Results) -> list[Call]:
    todo, subject = _subject(intent, results)
    if subject is None:
        return todo
    return c.missing(results, [c.refunds(intent.period, subject.where())])


def _change(intent: Intent, results: Results) -> list[Call]:
    return plan_change(intent.kind, dict(intent.details), intent.period.end, results)


def _compare(intent: Intent, results: Results) -> list[Call]:
    baseline = intent.baseline or intent.period
    first = c.compare(intent.period, baseline)
    if todo := c.missing(results, [first]):
        return todo
    if not currencies(c.result_of(results, first)):
        return c.missing(results, c.any_data())
    names = _merchant_calls(intent) if intent.term and not intent.category else []
    if todo := c.missing(results, names):
        return todo
    subject = compare_subject(intent, results)
    if subject is None or subject.kind not in ("category", "merchant"):
        return []
    where, periods = subject.where(), (baseline, intent.period)
    if todo := c.missing(results, [c.totals(p, where) for p in periods]):
        return todo
    # Where money came back: its total in and, at a merchant, out (the figures the answer cites).
    more: list[Call] = []
    for p in periods:
        if has_refunds(c.result_of(results, c.totals(p, where))):
            more.append(c.refunded(p, where))
            if subject.kind == "merchant":
                more.append(c.charges(p, where))
    return c.missing(results, more)


def _largest(intent: Intent, results: Results) -> list[Call]:
    todo, subject = _subject(intent, results)
    if subject is None:
        return todo
    return c.missing(results, [c.largest(intent.period, subject.where())])


def _first_round(intent: Intent, results: Results) -> list[Call]:
    first = [c.by_category(intent.period)]
    if intent.term and not intent.category:
        first.append(c.by_merchant(intent.period))
    return c.missing(results, first)


def _budget(intent: Intent, results: Results) -> list[Call]:
    if todo := c.missing(results, [c.budget(intent.period)]):
        return todo
    status = c.result_of(results, c.budget(intent.period))
    if isinstance(status, dict) and not status.get("budgets"):
        return c.missing(results, c.any_data())
    return []


def _recurring(intent: Intent, results: Results) -> list[Call]:
    if todo := c.missing(results, [c.recurring()]):
        return todo
    found = c.result_of(results, c.recurring())
    if isinstance(found, dict) and not found.get("count"):
        return c.missing(results, c.any_data())
    if dict(intent.details).get("only") == "subscriptions":
        # Their own total: the subscriptions category's payments alone, never the rent.
        name = subscriptions_category(found)
        return c.missing(results, [c.recurring(category=name, direction="out")]) if name else []
    return []


def transfer_calls(intent: Intent) -> list[Call]:
    """Money moved out of and into the user's accounts (of the transfers a term names)."""
    where = {"merchant": intent.term} if intent.term else {}
    return [c.transfers(intent.period, where, way) for way in ("out", "in")]


def subscriptions_category(found: Any) -> str | None:
    """Return the user's category of subscriptions among the series' categories, if any."""
    items = found.get("recurring") if isinstance(found, dict) else None
    names = dict.fromkeys(str(i.get("category")) for i in items or [] if i.get("category"))
    return next((n for n in names if category_in(n) == "subscriptions"), None)


def _chart(intent: Intent, results: Results) -> list[Call]:
    drawn = dict(intent.details).get("chart", "spending_by_month")
    if drawn in ("account_balance", "balance_forecast"):
        return _balance_chart(intent, results)
    category = None
    if intent.category:
        todo, subject = _subject(intent, results)
        if subject is None:
            return todo
        category = subject.name if subject.kind == "category" else None
    return c.missing(results, [c.chart(drawn, intent.period, category)])


def _balance_chart(intent: Intent, results: Results) -> list[Call]:
    """The account the question names (else the first checking one), then its balance chart."""
    found = c.result_of(results, c.balances())
    if not isinstance(found, dict):
        return [c.balances()]
    accounts = [a for a in found.get("accounts") or [] if isinstance(a, dict)]
    words = dict(intent.details).get("words", "")
    named = [a for a in accounts if str(a.get("name", "")).lower() in words]
    checking = [a for a in accounts if a.get("kind") == "checking"]
    candidates = named or checking or accounts
    if not candidates:
        return []
    chosen = candidates[0]
    drawn = dict(intent.details).get("chart", "account_balance")
    args = {"kind": drawn, **intent.period.span(), "account": chosen["name"]}
    return c.missing(results, [("chart", args)])


def _in_and_out(intent: Intent, results: Results) -> list[Call]:
    """Money in (income) against money out (spending), per currency, as get_cash_flow counts."""
    if todo := c.missing(results, [c.cash_flow(intent.period)]):
        return todo
    if not currencies(c.result_of(results, c.cash_flow(intent.period))):
        return c.missing(results, c.any_data())
    return []


def _average(intent: Intent, results: Results) -> list[Call]:
    """Spend per month, of a category or all: its average is the answer (a number)."""
    if not intent.subject():
        return c.missing(results, [c.by_month(intent.period)])
    todo, subject = _subject(intent, results)
    if subject is None or subject.kind != "category":
        return todo
    return c.missing(results, [c.by_month(intent.period, subject.name)])


def top_merchants(intent: Intent, results: Results) -> dict[str, list[str]] | None:
    """Return each currency's merchants with the most spending, largest first (None until
    summarised): every currency has its own leaders."""
    found = c.result_of(results, c.by_merchant(intent.period))
    if found is None:
        return None
    return {
        str(block.get("currency")): [
            str(g.get("key")) for g in (block.get("groups") or [])[: c.TOP_MERCHANTS]
        ]
        for block in currencies(found)
    }


def _merchants(intent: Intent, results: Results) -> list[Call]:
    if todo := c.missing(results, [c.by_merchant(intent.period)]):
        return todo
    names = dict.fromkeys(n for ns in (top_merchants(intent, results) or {}).values() for n in ns)
    return c.missing(results, [c.totals(intent.period, {"merchant": n}) for n in names])
