"""Request schemas of the finance records answers cite: the transactions query."""

from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, fields, validate, validates_schema

from routes.requests import storable
from tools.finance.inputs import TransactionsInput


class TransactionsQuery(TransactionsInput):
    """Query of GET /api/transactions: get_transactions' filters, sort and page, in a URL."""

    pending = fields.Boolean(
        truthy={"true"},
        falsy={"false"},
        metadata={"description": "`true`: only pending; `false`: only posted; omit for both."},
    )
    imported = fields.Boolean(
        truthy={"true"},
        falsy={"false"},
        metadata={"description": "`true`: only imported rows; `false`: only the others."},
    )
    limit = fields.Integer(
        load_default=50,
        validate=validate.Range(min=1, max=100),
        metadata={"description": "Rows per page, 1 to 100."},
    )

    @validates_schema
    def _storable(self, data: dict[str, Any], **_: Any) -> None:
        # A NUL reaches no database: PostgreSQL refuses it in any string it compares.
        for name in ("category", "merchant", "account", "cursor"):
            if isinstance(data.get(name), str):
                try:
                    storable(data[name])
                except ValidationError as err:
                    raise ValidationError(err.messages, name) from err
