"""Input schemas of the finance tools; descriptions are written for the model."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from tools.finance.fields import (
    MAX_POSITIVE_AMOUNT,
    CurrencyCode,
    IdList,
    IsoDate,
    MajorAmount,
    PositiveAmount,
    StrictBoolean,
    StrictInteger,
    YearMonth,
)
from tools.finance.flows import FILTERS as FLOWS

SORTS = ("date_desc", "date_asc", "amount_desc", "amount_asc")
GROUPINGS = ("category", "merchant", "month", "week")
MAX_LIMIT = 200


def _date(what: str, *, required: bool = False) -> IsoDate:
    return IsoDate(required=required, metadata={"description": f"{what} (YYYY-MM-DD, inclusive)."})


def _name(description: str) -> fields.String:
    return fields.String(validate=validate.Length(1, 80), metadata={"description": description})


PERIOD_START = "First day of the period; omit both dates for all of the user's history"
PERIOD_END = "Last day of the period; omit both dates for all of the user's history"
CATEGORY_HELP = (
    "Category name, case-insensitive, e.g. 'Groceries'. 'Uncategorized' selects transactions "
    "without a category."
)


class TransactionsInput(Schema):
    """Filters, sort order and page of get_transactions."""

    start_date = _date("First day to include; omit for all of the user's history before end_date")
    end_date = _date("Last day to include; omit for all of the user's history after start_date")
    category = _name(CATEGORY_HELP)
    merchant = fields.String(
        validate=validate.Length(1, 80),
        metadata={"description": "Case-insensitive substring of the merchant, e.g. 'amazon'."},
    )
    account = _name("Account name, case-insensitive, as listed by get_account_balances.")
    direction = fields.String(
        validate=validate.OneOf(("out", "in")),
        metadata={
            "description": "'out' for money spent (negative amounts), 'in' for money received."
        },
    )
    flow = fields.String(
        validate=validate.OneOf(FLOWS),
        metadata={
            "description": "'spending' (money out, not a transfer), 'refund', 'income' (other "
            "money in, categorized or not), 'transfer' (between the user's accounts), or "
            "'net_spending' (spending and refunds: their sum is net spending)."
        },
    )
    min_amount = MajorAmount(
        metadata={
            "description": "Minimum ABSOLUTE amount in major units as a decimal string, e.g. "
            "'100' matches both -150.00 and +150.00. Combine with direction to pick a sign."
        }
    )
    max_amount = MajorAmount(
        metadata={"description": "Maximum ABSOLUTE amount in major units, e.g. '20.00'."}
    )
    # Typed as the general fields: routes/records/requests.py's query form reads them from text.
    pending: fields.Boolean = StrictBoolean(
        metadata={"description": "true: only pending; false: only posted; omit for both."}
    )
    imported: fields.Boolean = StrictBoolean(
        metadata={
            "description": "true: only rows added by a statement import; false: only rows "
            "added otherwise; omit for both."
        }
    )
    ids = IdList(
        metadata={"description": "Only these transactions: ids separated by commas, e.g. '12,40'."}
    )
    sort = fields.String(
        load_default="date_desc",
        validate=validate.OneOf(SORTS),
        metadata={
            "description": "Order of rows. amount_desc puts the largest ABSOLUTE amounts first."
        },
    )
    limit: fields.Integer = StrictInteger(
        load_default=50,
        validate=validate.Range(1, MAX_LIMIT),
        metadata={"description": f"Rows per page, 1 to {MAX_LIMIT}."},
    )
    cursor = fields.String(
        validate=validate.Length(1, 500),
        metadata={
            "description": "next_cursor from the previous call, to fetch the next page. Pass the "
            "same filters and sort again with it."
        },
    )


class SpendingSummaryInput(Schema):
    """Period, grouping and filter of get_spending_summary."""

    start_date = _date(PERIOD_START)
    end_date = _date(PERIOD_END)
    group_by = fields.String(
        load_default="category",
        validate=validate.OneOf(GROUPINGS),
        metadata={"description": "category, merchant, month (YYYY-MM) or week (ISO week)."},
    )
    top_n = StrictInteger(
        load_default=10,
        validate=validate.Range(1, 50),
        metadata={
            "description": "For category/merchant grouping: how many largest groups to list; "
            "the rest are summed under 'other'."
        },
    )
    category = _name("Only count this category (case-insensitive), e.g. 'Restaurants'.")


class AccountBalancesInput(Schema):
    """get_account_balances takes no input."""


class BudgetStatusInput(Schema):
    """Month of get_budget_status."""

    month = YearMonth(
        metadata={"description": "Month as YYYY-MM; omit for the current month."},
    )


class CompareSpendingInput(Schema):
    """The two periods of compare_spending."""

    period_a_start = _date("Baseline period, first day", required=True)
    period_a_end = _date("Baseline period, last day", required=True)
    period_b_start = _date("Compared period, first day", required=True)
    period_b_end = _date("Compared period, last day", required=True)


class RecurringInput(Schema):
    """Detection settings and filters of find_recurring_payments."""

    lookback_months = StrictInteger(
        validate=validate.Range(1, 36),
        metadata={
            "description": "How many months of history to scan, 1 to 36; omit for all of the "
            "user's history (at most 36 months)."
        },
    )
    min_occurrences = StrictInteger(
        validate=validate.Range(2, 24),
        metadata={
            "description": "Fewest charges to call a series recurring; omit for each cadence's "
            "own (weekly 4, biweekly, monthly and quarterly 3, yearly 2)."
        },
    )
    amount_tolerance_pct = StrictInteger(
        load_default=10,
        validate=validate.Range(0, 50),
        metadata={
            "description": "How far (in percent) a charge may drift from the one before it "
            "and still be the same price; a bigger move that holds is a price change."
        },
    )
    direction = fields.String(
        validate=validate.OneOf(("out", "in")),
        metadata={"description": "'out' for payments, 'in' for income (salary); omit for both."},
    )
    category = _name("Only series in this category (case-insensitive), e.g. 'Subscriptions'.")
    include_transfers: fields.Boolean = StrictBoolean(
        load_default=False,
        metadata={
            "description": "Also list recurring transfers between the user's own accounts "
            "(e.g. a monthly move to savings); they are never counted as spending or income."
        },
    )
    include_dismissed: fields.Boolean = StrictBoolean(
        load_default=False,
        metadata={"description": "Also list the series the user dismissed."},
    )


class ForecastInput(Schema):
    """The date and account of forecast_balance."""

    date = _date(
        "The day to project the balance to, from today up to two years ahead", required=True
    )
    account = _name("Only this account (case-insensitive), as get_account_balances lists it.")
    include_budgets: fields.Boolean = StrictBoolean(
        load_default=False,
        metadata={
            "description": "Also take off what the user's monthly budgets still allow to be "
            "spent up to the date (shown apart, per currency)."
        },
    )


class UpcomingBillsInput(Schema):
    """The horizon of get_upcoming_bills."""

    days = StrictInteger(
        load_default=30,
        validate=validate.Range(1, 366),
        metadata={"description": "How many days ahead, from today, 1 to 366 (default 30)."},
    )
    include_income: fields.Boolean = StrictBoolean(
        load_default=False,
        metadata={"description": "Also list expected money in (salary and other income)."},
    )


class CashFlowInput(Schema):
    """The period and grouping of get_cash_flow."""

    start_date = _date(PERIOD_START)
    end_date = _date(PERIOD_END)
    group_by = fields.String(
        load_default="none",
        validate=validate.OneOf(("none", "month")),
        metadata={
            "description": "'month' adds each month's figures; 'none' (default) only the period's."
        },
    )


class SetBudgetInput(Schema):
    """The category, limit and currency of set_budget."""

    category = fields.String(
        required=True,
        validate=validate.Length(1, 80),
        metadata={
            "description": "Name of one of the user's expense categories, case-insensitive, "
            "e.g. 'Groceries'."
        },
    )
    amount = PositiveAmount(
        required=True,
        metadata={
            "description": "The new monthly limit in major units as a decimal string, greater "
            f"than 0, at most 2 decimals and at most {MAX_POSITIVE_AMOUNT}, e.g. '400' or "
            "'49.99'."
        },
    )
    currency = CurrencyCode(
        metadata={
            "description": "3-letter currency code, e.g. 'USD'. Omit to keep the currency of "
            "the category's existing budget (else that of the user's first account)."
        },
    )


class CategorizeTransactionInput(Schema):
    """The transaction and new category of categorize_transaction."""

    transaction_id = StrictInteger(
        required=True,
        validate=validate.Range(1, 2**31 - 1),
        metadata={"description": "The transaction's id, as returned by get_transactions."},
    )
    category = fields.String(
        required=True,
        validate=validate.Length(1, 80),
        metadata={
            "description": "Name of one of the user's categories (any kind), "
            "case-insensitive, e.g. 'Restaurants'."
        },
    )


MAX_CATEGORIZE = 200


class CategorizeChangeInput(Schema):
    """One row of categorize_transactions: a transaction and its new category."""

    transaction_id = StrictInteger(
        required=True,
        validate=validate.Range(1, 2**31 - 1),
        metadata={"description": "The transaction's id, as returned by get_transactions."},
    )
    category = fields.String(
        required=True,
        validate=validate.Length(1, 80),
        metadata={"description": "Name of one of the user's categories, case-insensitive."},
    )


class CategorizeTransactionsInput(Schema):
    """The rows and new categories of categorize_transactions."""

    changes = fields.List(
        fields.Nested(CategorizeChangeInput),
        required=True,
        validate=validate.Length(1, MAX_CATEGORIZE),
        metadata={
            "description": f"1 to {MAX_CATEGORIZE} changes, each transaction at most once, e.g. "
            '[{"transaction_id": 41, "category": "Groceries"}].'
        },
    )


CHARTS = (
    "spending_by_month",
    "spending_by_category",
    "category_share",
    "category_by_month",
    "income_vs_spending",
    "budget_progress",
    "account_balance",
    "balance_forecast",
)


class ChartInput(Schema):
    """What the chart tool draws, over which period."""

    kind = fields.String(
        required=True,
        validate=validate.OneOf(CHARTS),
        metadata={
            "description": "spending_by_month (bars, optionally one category), "
            "spending_by_category (bars), category_share (a donut of each category's share of "
            "spending), category_by_month (monthly spending as bars stacked by category), "
            "income_vs_spending (per month), budget_progress (one category's budget: spend to "
            "date per day of start_date's month against its limit, and in the current month the "
            "spend projected to its end at the pace so far), account_balance (one account's "
            "balance at each month's end), or balance_forecast (the balance as it was from "
            "start_date to today and as projected from the recurring series up to end_date, a "
            "future day; one account, or each currency's accounts together)."
        },
    )
    start_date = _date(
        "First day of the period; omit for all of the user's history (a chart by month: its "
        "last 36 months; budget_progress: this month; balance_forecast: 3 months ago)"
    )
    end_date = _date(
        "Last day of the period; omit for today (balance_forecast: the projected day, "
        "default 90 days ahead)"
    )
    category = _name(
        "spending_by_month: just this category; budget_progress: the budgeted category."
    )
    account = _name(
        "account_balance and balance_forecast: the account, as get_account_balances lists it."
    )
