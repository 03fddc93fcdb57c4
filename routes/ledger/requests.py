"""Request schemas of the user's own records managed by hand: what a new or changed account,
category, transaction, rule, flow mark or series choice carries."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from models.finance import ACCOUNT_KINDS, CATEGORY_KINDS, FLOW_MARKS, SERIES_STATUSES
from routes.requests import NO_NUL

AMOUNT = {"description": "Signed decimal in major units: '-82.10' is money out."}


def _name(maximum: int, **kwargs: Any) -> fields.String:
    return fields.String(
        validate=[validate.Length(min=1, max=maximum), validate.Regexp(NO_NUL)], **kwargs
    )


class NewAccount(Schema):
    """Body of POST /api/accounts."""

    name = _name(80, required=True)
    kind = fields.String(required=True, validate=validate.OneOf(ACCOUNT_KINDS))
    currency = fields.String(required=True, validate=validate.Regexp(r"\A[A-Za-z]{3}\Z"))
    balance = fields.Decimal(allow_nan=False, metadata=AMOUNT)


class NewCategory(Schema):
    """Body of POST /api/categories."""

    name = _name(80, required=True)
    kind = fields.String(load_default="expense", validate=validate.OneOf(CATEGORY_KINDS))


class TransactionChange(Schema):
    """Body of PATCH /api/transactions/<id>: the fields to change."""

    date = fields.Date()
    amount = fields.Decimal(allow_nan=False, metadata=AMOUNT)
    merchant = _name(120)
    description = fields.String(validate=[validate.Length(max=255), validate.Regexp(NO_NUL)])
    category = _name(
        80, allow_none=True, metadata={"description": "A category's name; null: none."}
    )
    pending = fields.Boolean()


class NewTransaction(TransactionChange):
    """Body of POST /api/transactions."""

    account_id = fields.Integer(required=True, validate=validate.Range(min=1, max=2147483647))
    date = fields.Date(required=True)
    amount = fields.Decimal(required=True, allow_nan=False, metadata=AMOUNT)
    merchant = _name(120, required=True)


class NewRule(Schema):
    """Body of POST /api/category-rules: the category and at least one condition."""

    category = _name(80, required=True, metadata={"description": "One of the caller's."})
    payee_contains = _name(
        120, metadata={"description": "Text the payee or description holds (any case)."}
    )
    min_amount = fields.Decimal(allow_nan=False, metadata=AMOUNT)
    max_amount = fields.Decimal(allow_nan=False, metadata=AMOUNT)


class FlowMark(Schema):
    """Body of PUT /api/transactions/<id>/flow: the user's correction of what a row is."""

    mark = fields.String(
        required=True,
        validate=validate.OneOf(FLOW_MARKS),
        metadata={
            "description": "`transfer` or `not_transfer` (between the caller's own accounts); "
            "`refund` or `not_refund` (money in only: money back for spending, or income)."
        },
    )


class SeriesChoice(Schema):
    """Body of PUT /api/recurring/<series_id>: confirm, dismiss or rename a series."""

    status = fields.String(
        allow_none=True,
        validate=validate.OneOf(SERIES_STATUSES),
        metadata={"description": "`confirmed`, `dismissed`, or null: as detected."},
    )
    name = _name(
        120, allow_none=True, metadata={"description": "The series' name; null: its merchant's."}
    )
