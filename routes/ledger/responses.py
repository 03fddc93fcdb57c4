"""Response schemas of the user's own records managed by hand: accounts, categories, budgets,
rules and series choices as listed."""

from __future__ import annotations

from marshmallow import Schema, fields

from models.finance import CATEGORY_KINDS, SERIES_STATUSES
from routes.records.responses import AccountRecord


class AccountList(Schema):
    """The caller's accounts."""

    accounts = fields.List(fields.Nested(AccountRecord), required=True)


class CategoryRecord(Schema):
    """A category."""

    id = fields.Integer(required=True)
    name = fields.String(required=True)
    kind = fields.String(required=True, metadata={"enum": list(CATEGORY_KINDS)})


class CategoryList(Schema):
    """The caller's categories."""

    categories = fields.List(fields.Nested(CategoryRecord), required=True)


class BudgetItem(Schema):
    """A budget: its category, month (null: every month) and limit."""

    id = fields.Integer(required=True)
    category = fields.String(required=True)
    month = fields.String(required=True, allow_none=True)
    limit = fields.String(required=True)
    currency = fields.String(required=True)


class BudgetList(Schema):
    """The caller's budgets."""

    budgets = fields.List(fields.Nested(BudgetItem), required=True)


class RuleRecord(Schema):
    """A category rule."""

    id = fields.Integer(required=True)
    category = fields.String(required=True)
    payee_contains = fields.String(required=True, allow_none=True)
    min_amount = fields.String(required=True, allow_none=True)
    max_amount = fields.String(required=True, allow_none=True)


class RuleList(Schema):
    """The caller's category rules, in the order they are tried."""

    rules = fields.List(fields.Nested(RuleRecord), required=True)


class SeriesChoiceRecord(Schema):
    """The caller's word on a recurring series."""

    series_id = fields.String(required=True)
    status = fields.String(required=True, allow_none=True, metadata={"enum": list(SERIES_STATUSES)})
    name = fields.String(required=True, allow_none=True)
