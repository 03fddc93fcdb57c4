"""Input schemas of the finance tools; descriptions are written for the model."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from tools.finance.fields import (
    MAX_POSITIVE_AMOUNT,
    CurrencyCode,
    IsoDate,
    MajorAmount,
    PositiveAmount,
    StrictBoolean,
    StrictInteger,
    YearMonth,
)

SORTS = ("date_desc", "date_asc", "amount_desc", "amount_asc")
GROUPINGS = ("category", "merchant", "month", "week")
MAX_LIMIT = 200


def _date(what: str, *, required: bool = False) -> IsoDate:
    return IsoDate(required=required, metadata={"description": f"{what} (YYYY-MM-DD, inclusive)."})


def _name(description: str) -> fields.String:
    return fields.String(validate=validate.Length(1, 80), metadata={"description": description})


CATEGORY_HELP = (
    "Category name, case-insensitive, e.g. 'Groceries'. 'Uncategorized' selects transactions "
    "without a category."
)


class TransactionsInput(Schema):
    """Filters, sort order and page of get_transactions."""

    start_date = _date("First day to include; omit for no lower bound")
    end_date = _date("Last day to include; omit for no upper bound")
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
    min_amount = MajorAmount(
        metadata={
            "description": "Minimum ABSOLUTE amount in major units as a decimal string, e.g. "
            "'100' matches both -150.00 and +150.00. Combine with direction to pick a sign."
        }
    )
    max_amount = MajorAmount(
        metadata={"description": "Maximum ABSOLUTE amount in major units, e.g. '20.00'."}
    )
    # Typed as the general fields: routes/requests.py's query form reads them from text.
    pending: fields.Boolean = StrictBoolean(
        metadata={"description": "true: only pending; false: only posted; omit for both."}
    )
    imported: fields.Boolean = StrictBoolean(
        metadata={
            "description": "true: only rows added by a statement import; false: only rows "
            "added otherwise; omit for both."
        }
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

    start_date = _date("First day of the period", required=True)
    end_date = _date("Last day of the period", required=True)
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
    """Detection settings of find_recurring_payments."""

    lookback_months = StrictInteger(
        load_default=12,
        validate=validate.Range(1, 36),
        metadata={"description": "How many months of history to scan, 1 to 36."},
    )
    min_occurrences = StrictInteger(
        load_default=3,
        validate=validate.Range(3, 24),
        metadata={"description": "Minimum number of charges to call a payment recurring."},
    )
    amount_tolerance_pct = StrictInteger(
        load_default=10,
        validate=validate.Range(0, 50),
        metadata={"description": "How far (in percent) a charge may differ from the typical one."},
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
            "spend projected to its end at the pace so far), or account_balance (one account's "
            "balance at each month's end)."
        },
    )
    start_date = _date("First day of the period", required=True)
    end_date = _date("Last day of the period", required=True)
    category = _name(
        "spending_by_month: just this category; budget_progress: the budgeted category."
    )
    account = _name("account_balance only: the account, as get_account_balances lists it.")
