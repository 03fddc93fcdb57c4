"""Personal finance tools, read-only and writes; each declared once, scoped to the user id."""

from __future__ import annotations

from tools.finance import inputs as schemas
from tools.finance.categorize import categorize_transactions, preview_categorize_transactions
from tools.finance.chart import chart
from tools.finance.recurring import find_recurring_payments
from tools.finance.status import get_account_balances, get_budget_status
from tools.finance.summary import compare_spending, get_spending_summary
from tools.finance.transactions import get_transactions
from tools.finance.writes import (
    categorize_transaction,
    preview_categorize_transaction,
    preview_set_budget,
    set_budget,
)
from tools.registry import Tool

AMOUNTS = (
    "Amounts are decimal strings in major units with their currency (e.g. '-42.50' EUR); "
    "currencies are never converted or mixed."
)
SPEND = (
    "Spend = money out minus refunds in expense categories, plus uncategorized money out; "
    "income and transfers between the user's accounts are excluded; pending transactions count."
)
WRITE = (
    "This CHANGES the user's data: it runs only after the user approves the change in the "
    "chat (if they decline, nothing changes). Call it only when the user asked for this change."
)

FINANCE_TOOLS: list[Tool] = [
    Tool(
        name="get_transactions",
        description=(
            "List the user's bank and card transactions, newest first by default. Filter by "
            "date range, category, merchant text, account, direction, amount range, pending and "
            "imported (rows a statement import added). "
            "Amounts are signed: negative = money out, positive = money in (refunds, salary). "
            "min_amount/max_amount compare the ABSOLUTE amount. Returns one page of rows plus "
            "count and totals per currency over ALL matching rows; when has_more is true, call "
            f"again with the same filters and cursor=next_cursor. {AMOUNTS}"
        ),
        schema=schemas.TransactionsInput,
        handler=get_transactions,
    ),
    Tool(
        name="get_spending_summary",
        description=(
            "Total spending over a period grouped by category, merchant, month or week, with "
            "count and share of the total per group, per currency. Use it for 'how much did I "
            f"spend on X' and 'where does my money go'. Spend is reported positive. {SPEND} "
            f"{AMOUNTS}"
        ),
        schema=schemas.SpendingSummaryInput,
        handler=get_spending_summary,
    ),
    Tool(
        name="get_account_balances",
        description=(
            "All of the user's accounts (checking, savings, credit_card) with their current "
            f"posted balance, and totals per currency. {AMOUNTS}"
        ),
        schema=schemas.AccountBalancesInput,
        handler=get_account_balances,
    ),
    Tool(
        name="get_budget_status",
        description=(
            "Budget status for one month: per budgeted category the limit, spent, remaining, "
            "percent_used and status (under, at or over), plus days elapsed in the month. A "
            "budget set for that specific month replaces the recurring monthly one. Only spend "
            f"in the budget's currency counts against it. {SPEND} {AMOUNTS}"
        ),
        schema=schemas.BudgetStatusInput,
        handler=get_budget_status,
    ),
    Tool(
        name="compare_spending",
        description=(
            "Compare spending per category between a baseline period A and a period B "
            "(e.g. last month vs the month before): totals of each, change = B - A, and "
            "change_pct relative to A (null when A is zero or negative). Categories are sorted "
            f"by the size of the change. {SPEND} {AMOUNTS}"
        ),
        schema=schemas.CompareSpendingInput,
        handler=compare_spending,
    ),
    Tool(
        name="find_recurring_payments",
        description=(
            "Detect recurring charges (subscriptions, rent, bills) in recent history: same "
            "merchant, similar amount, regular weekly/biweekly/monthly/quarterly/yearly cadence, "
            "at least min_occurrences charges. Gives typical amount (a positive charge), cadence, "
            "last and next expected date, whether it still looks active, its monthly cost and the "
            f"estimated monthly total of active ones. {AMOUNTS}"
        ),
        schema=schemas.RecurringInput,
        handler=find_recurring_payments,
    ),
    Tool(
        name="chart",
        description=(
            "Chart of the user's records (bars, a donut, stacked bars or a line), computed from "
            "their transactions (one Vega-Lite spec per currency; the page draws it). Use for "
            "chart, plot, graph, trend, share, 'over time' and comparisons over several periods; "
            "do not restate the figures as numbers."
        ),
        schema=schemas.ChartInput,
        handler=chart,
    ),
    Tool(
        name="set_budget",
        description=(
            "Create or change the user's recurring monthly budget (spending limit) for one "
            f"expense category. {WRITE} A budget set for one specific month overrides the "
            "recurring one in that month; this tool does not change it. Returns the budget "
            f"after the change and the limit before it (null when there was none). {AMOUNTS}"
        ),
        schema=schemas.SetBudgetInput,
        handler=set_budget,
        side_effects=True,
        preview=preview_set_budget,
    ),
    Tool(
        name="categorize_transaction",
        description=(
            "Put one of the user's transactions (by its id from get_transactions) in another "
            f"of the user's categories. {WRITE} Returns the transaction after the change and "
            "the category before it (null when it had none)."
        ),
        schema=schemas.CategorizeTransactionInput,
        handler=categorize_transaction,
        side_effects=True,
        preview=preview_categorize_transaction,
    ),
    Tool(
        name="categorize_transactions",
        description=(
            "Put several of the user's transactions (ids from get_transactions, e.g. with "
            "category 'Uncategorized' for rows without one) in the user's existing categories, "
            f"as one change the user approves at once. {WRITE} Every id must be the user's and "
            "every category must exist, or nothing changes. Returns how many rows changed, per "
            "category, and each row's category before and after."
        ),
        schema=schemas.CategorizeTransactionsInput,
        handler=categorize_transactions,
        side_effects=True,
        preview=preview_categorize_transactions,
    ),
]

__all__ = ["FINANCE_TOOLS"]
