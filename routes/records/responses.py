"""Response schemas of the finance records that answers cite (`txn:`, `budget:`, `account:`)."""

from __future__ import annotations

from marshmallow import Schema, fields


class TransactionRecord(Schema):
    """A transaction as get_transactions shows it (`txn:<id>`)."""

    id = fields.Integer(required=True)
    date = fields.String(required=True, metadata={"format": "date"})
    amount = fields.String(
        required=True, metadata={"description": "Signed decimal, major units: '-82.10'."}
    )
    currency = fields.String(required=True)
    merchant = fields.String(required=True)
    description = fields.String(required=True)
    category = fields.String(required=True, allow_none=True)
    account = fields.String(required=True)
    pending = fields.Boolean(required=True)
    flow = fields.String(
        metadata={
            "enum": ["spending", "refund", "income", "transfer"],
            "description": "What the row is by the money rule (docs/tools.md).",
        }
    )
    flow_marked = fields.String(
        metadata={
            "enum": ["transfer", "not_transfer", "refund", "not_refund"],
            "description": "The caller's correction, when they made one.",
        }
    )


class AccountRecord(Schema):
    """An account as get_account_balances shows it (`account:<id>`)."""

    id = fields.Integer(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True, metadata={"enum": ["checking", "savings", "credit_card"]})
    currency = fields.String(required=True)
    balance = fields.String(required=True, metadata={"description": "Posted balance."})


class OtherSpend(Schema):
    """Spend in a currency other than the budget's: shown, not counted."""

    spent = fields.String(required=True)
    currency = fields.String(required=True)


class BudgetRecord(Schema):
    """A budget as get_budget_status shows it (`budget:<id>`), over `month`."""

    id = fields.Integer(required=True)
    month = fields.String(
        required=True,
        metadata={"description": "YYYY-MM: its own month, or the current one if recurring."},
    )
    category = fields.String(required=True)
    budget_type = fields.String(required=True, metadata={"enum": ["recurring", "this_month"]})
    currency = fields.String(required=True)
    limit = fields.String(required=True)
    spent = fields.String(required=True)
    remaining = fields.String(required=True)
    percent_used = fields.String(required=True, allow_none=True)
    status = fields.String(required=True, metadata={"enum": ["under", "at", "over"]})
    not_counted_other_currencies = fields.List(fields.Nested(OtherSpend))


class CurrencyTotal(Schema):
    """Totals of every matching transaction in one currency."""

    currency = fields.String(required=True)
    net = fields.String(required=True)
    money_out = fields.String(required=True)
    money_in = fields.String(required=True)
    count = fields.Integer(required=True)


class TransactionPage(Schema):
    """A page of the transactions a `txns:<query>` source stands for; count and totals cover all."""

    transactions = fields.List(fields.Nested(TransactionRecord), required=True)
    count = fields.Integer(required=True, metadata={"description": "Every matching row."})
    totals = fields.List(fields.Nested(CurrencyTotal), required=True)
    next_cursor = fields.String(required=True, allow_none=True)
