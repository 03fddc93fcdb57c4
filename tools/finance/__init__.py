"""Personal finance tools, read-only and writes; each declared once, scoped to the user id."""

from __future__ import annotations

from tools.finance import inputs as schemas
from tools.finance.cash_flow import get_cash_flow
from tools.finance.categorize import categorize_transactions, preview_categorize_transactions
from tools.finance.chart import chart
from tools.finance.forecast import forecast_balance, get_upcoming_bills
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
    "Spend = money out that is not a transfer between the user's own accounts, less refunds; "
    "pending rows count."
)
PERIOD = "The result states its period; without dates it covers all of the user's history."
WRITE = (
    "This CHANGES the user's data: it runs only after the user approves the change in the "
    "chat (if they decline, nothing changes). Call it only when the user asked for this change."
)

FINANCE_TOOLS: list[Tool] = [
    Tool(
        name="get_transactions",
        description=(
            "List the user's bank and card transactions, newest first by default, filtered by "
            "dates, category, merchant text, account, direction, flow, amounts, pending, "
            "imported (added by a statement import) or ids. Amounts are signed: negative = "
            "money out; each row's flow says what it counts as (spending, refund, income, "
            "transfer). min_amount/max_amount compare the ABSOLUTE amount. Returns one page of "
            "rows plus count and totals per currency over ALL matches; when has_more is true, "
            f"call again with the same filters and cursor=next_cursor. {PERIOD} {AMOUNTS}"
        ),
        schema=schemas.TransactionsInput,
        handler=get_transactions,
    ),
    Tool(
        name="get_spending_summary",
        description=(
            "Spending over a period grouped by category, merchant, month or week, per currency: "
            "each group's spend, count and share, and the total before refunds, the refunds "
            "and the total after them (total_spent). Use it for 'how much did I spend on X', "
            "'where does my money go', top merchants (each currency has its own). Spend is "
            f"positive. {SPEND} {PERIOD} {AMOUNTS}"
        ),
        schema=schemas.SpendingSummaryInput,
        handler=get_spending_summary,
    ),
    Tool(
        name="get_cash_flow",
        description=(
            "Money in vs money out per currency: income (every inflow that is not a refund or a "
            "transfer, categorized or not; by category), spending before and after refunds, "
            "refunds, net (income - spending) and savings rate; transfers between the user's "
            "accounts are shown apart. Use it for income, 'money in vs out', savings rate, 'how "
            f"much did I save'; group_by month for each month. {PERIOD} {AMOUNTS}"
        ),
        schema=schemas.CashFlowInput,
        handler=get_cash_flow,
    ),
    Tool(
        name="get_account_balances",
        description=(
            "All of the user's accounts (checking, savings, credit_card) with their current "
            "posted balance, signed (negative = overdrawn or owed), and totals per currency. "
            f"For a future balance use forecast_balance. {AMOUNTS}"
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
            f"in the budget's currency counts against it. Without month: the current month. "
            f"{SPEND} {AMOUNTS}"
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
            "Recurring series, money out (subscriptions, rent, bills) and in (salary): one "
            "merchant (spellings normalised), weekly to yearly, a steady amount or a varying "
            "bill. Each: series_id, name, direction, cadence, last and next amount, next date, "
            "active, monthly cost, price_changes ('15.49 -> 17.99 USD since March 2025'), "
            "status (the user's word) and its rows' ids. Use it for subscriptions (filter "
            "category), 'what went up in price', 'when is my next rent / payday'. Totals: the "
            f"monthly cost of active payments out, and of income. {AMOUNTS}"
        ),
        schema=schemas.RecurringInput,
        handler=find_recurring_payments,
    ),
    Tool(
        name="forecast_balance",
        description=(
            "The user's balance on a future date, per account and currency: today's posted "
            "balance + pending rows + each expected occurrence of the account's active "
            "recurring series (salary, bills, transfers) up to the date; optionally less what "
            "budgets still allow. Names every series used. Use it for 'what will my balance "
            f"be on <date>', 'will I have enough by the end of the month'. {AMOUNTS}"
        ),
        schema=schemas.ForecastInput,
        handler=forecast_balance,
    ),
    Tool(
        name="get_upcoming_bills",
        description=(
            "The recurring payments due in the next days (default 30), oldest first: date, name, "
            "amount, account, cadence, price changed or not; totals per currency; optionally "
            f"expected income too. Transfers between the user's accounts are not bills. {AMOUNTS}"
        ),
        schema=schemas.UpcomingBillsInput,
        handler=get_upcoming_bills,
    ),
    Tool(
        name="chart",
        description=(
            "Chart of the user's records (bars, a donut, stacked bars or a line), computed from "
            "their transactions (one Vega-Lite spec per currency; the page draws it), a balance "
            "forecast included. Use for chart, plot, graph, trend, share, 'over time' and "
            "comparisons over several periods; do not restate the figures as numbers. "
            f"{PERIOD}"
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
