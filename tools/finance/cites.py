"""The search_result blocks of the finance tools: their source ids, titles and text.

A read tool's result carries `search_result` blocks the model can cite. Their sources are
stable and opaque to the model: `txn:<id>`, `budget:<id>`, `account:<id>`, and
`txns:<query>`, the transactions a summary figure rests on, `<query>` being a URL query of
get_transactions filters in a fixed order, so one set of filters is always one source.
Pure: no database; tools/finance/sources.py resolves them.
"""

from __future__ import annotations

from datetime import date
from typing import Any
from urllib.parse import urlencode

from tools.finance.flows import NET_SPENDING
from tools.finance.queries import UNCATEGORIZED

# get_transactions' filters, in the order a txns: query lists them.
FILTERS = (
    "start_date",
    "end_date",
    "category",
    "merchant",
    "account",
    "direction",
    "flow",
    "min_amount",
    "max_amount",
    "pending",
    "imported",
    "ids",
)


def search_result(source: str, title: str, text: str) -> dict[str, Any]:
    """Return one citable search_result block."""
    return {
        "type": "search_result",
        "source": source,
        "title": title,
        "content": [{"type": "text", "text": text}],
        "citations": {"enabled": True},
    }


def txn_source(transaction_id: int) -> str:
    """Return the source of one transaction."""
    return f"txn:{transaction_id}"


def budget_source(budget_id: int) -> str:
    """Return the source of one budget."""
    return f"budget:{budget_id}"


def account_source(account_id: int) -> str:
    """Return the source of one account."""
    return f"account:{account_id}"


def txns_source(filters: dict[str, Any]) -> str:
    """Return the source of the transactions matching get_transactions `filters`."""
    pairs = [(k, _text(filters[k])) for k in FILTERS if filters.get(k) is not None]
    return "txns:" + urlencode(pairs)


def spend_source(category: str | None, start: date | str, end: date | str) -> str:
    """Return the source of spending in a period (of one category, or all), as tools count it.

    Spending is net spending by the one money rule: money out that is spending, less the
    refunds of it (tools/finance/flows.py); their rows sum to the figure exactly.
    """
    where: dict[str, Any] = {"start_date": start, "end_date": end, "category": category}
    return txns_source({**where, "flow": NET_SPENDING})


def filters_title(filters: dict[str, Any]) -> str:
    """Return a txns: source's title: its filters in words, e.g. "Groceries · 2025-08-01 to …"."""
    start, end = filters.get("start_date"), filters.get("end_date")
    if start and end:
        period = f"{_text(start)} to {_text(end)}"
    else:
        period = f"from {_text(start)}" if start else (f"to {_text(end)}" if end else "all dates")
    named = [
        _filter_words(key, filters[key]) for key in FILTERS[2:] if filters.get(key) is not None
    ]
    return " · ".join(["Transactions", *named, period])


# What a flow filter selects, in words (tools/finance/flows.py).
FLOW_WORDS = {
    "spending": "spending",
    "refund": "refunds",
    "income": "income",
    "transfer": "transfers between own accounts",
    NET_SPENDING: "spending less refunds",
}


def _filter_words(key: str, value: Any) -> str:
    if key == "flow":
        return FLOW_WORDS.get(str(value), str(value))
    if key == "ids":
        return f"{len(str(value).split(','))} chosen rows"
    return f"{key.replace('_', ' ')} {_text(value)}"


def txns_result(filters: dict[str, Any], totals: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the search_result block of get_transactions' totals over every match."""
    parts = [
        f" {t['currency']}: {_count(t['count'])}, net {t['net']} {t['currency']} "
        f"({t['money_out']} out, {t['money_in']} in)."
        for t in totals
    ]
    text = f"{_count(sum(int(t['count']) for t in totals))} match." + "".join(parts)
    return search_result(txns_source(filters), filters_title(filters), text)


def spend_result(
    category: str | None, start: date | str, end: date | str, spent: list[tuple[str, str, int]]
) -> dict[str, Any]:
    """Return the search_result block of spending (of a category, or all): (currency, spent,
    count) each."""
    parts = [f"{amount} {cur} across {_count(count)}" for cur, amount, count in spent]
    what = category or "All spending"
    text = f"{what} spent, net of refunds: {'; '.join(parts)}."
    title = f"{what} · {_text(start)} to {_text(end)}"
    return search_result(spend_source(category, start, end), title, text)


def budget_title(category: str, month: str, limit: str, currency: str) -> str:
    """Return a budget's title: its category, month and limit."""
    return f"{category} budget · {month} · {limit} {currency}"


def budget_result(budget_id: int, month: str, row: dict[str, Any]) -> dict[str, Any]:
    """Return the search_result block of one get_budget_status row."""
    cur = row["currency"]
    text = (
        f"{row['category']} budget, {month}: limit {row['limit']} {cur}, spent {row['spent']} "
        f"{cur}, {row['status']}."
    )
    title = budget_title(row["category"], month, row["limit"], cur)
    return search_result(budget_source(budget_id), title, text)


def account_title(name: str, kind: str, balance: str, currency: str) -> str:
    """Return an account's title: its name, kind and balance."""
    return f"{name} · {kind} · {balance} {currency}"


def account_result(account_id: int, row: dict[str, Any]) -> dict[str, Any]:
    """Return the search_result block of one get_account_balances row."""
    name, kind, balance, cur = row["name"], row["kind"], row["balance"], row["currency"]
    text = f"Account {name} ({kind}): posted balance {balance} {cur}."
    return search_result(account_source(account_id), account_title(name, kind, balance, cur), text)


def series_title(name: str, cadence: str, amount: str, currency: str) -> str:
    """Return the title of a recurring series: its name, cadence and next amount."""
    return f"{name} · {cadence} · {amount} {currency}"


def transaction_title(row: dict[str, Any]) -> str:
    """Return a transaction row's title: date, merchant and signed amount."""
    return f"{row['date']} · {row['merchant']} · {row['amount']} {row['currency']}"


def transaction_text(row: dict[str, Any]) -> str:
    """Return what a transaction row says, in one sentence."""
    about = f" ({row['description']})" if row.get("description") else ""
    pending = "; pending" if row.get("pending") else ""
    return (
        f"{row['date']} {row['merchant']}{about}: {row['amount']} {row['currency']}; "
        f"{row.get('category') or UNCATEGORIZED}; {row['account']}{pending}."
    )


def transaction_result(row: dict[str, Any]) -> dict[str, Any]:
    """Return the search_result block of one transaction row."""
    return search_result(txn_source(row["id"]), transaction_title(row), transaction_text(row))


def _count(n: int) -> str:
    return f"{n} transaction{'' if n == 1 else 's'}"


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, date):
        return value.isoformat()
    return str(value)
