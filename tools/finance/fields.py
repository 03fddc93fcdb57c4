"""Strict marshmallow fields whose accepted input matches their derived JSON Schema exactly."""

from __future__ import annotations

import re
from typing import Any

from marshmallow import fields

# [0-9], not \d: Python's \d also matches non-ASCII digits, JSON Schema's does not.
DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
MONTH_PATTERN = r"^(19|20)[0-9]{2}-(0[1-9]|1[0-2])$"
AMOUNT_PATTERN = r"^[0-9]{1,12}(\.[0-9]{1,4})?$"
# 0.01 to 99999999.99, no leading zeros: "0" and "0.00" are refused by the pattern itself.
POSITIVE_AMOUNT_PATTERN = r"^([1-9][0-9]{0,7}(\.[0-9]{1,2})?|0\.(0[1-9]|[1-9][0-9]?))$"
MAX_POSITIVE_AMOUNT = "99999999.99"
CURRENCY_PATTERN = r"^[A-Za-z]{3}$"
MAX_IDS = 200
IDS_PATTERN = rf"^[1-9][0-9]{{0,9}}(,[1-9][0-9]{{0,9}}){{0,{MAX_IDS - 1}}}$"


class StrictInteger(fields.Integer):
    """A JSON integer: no booleans, strings or fractions (2.0 is JSON Schema's integer 2)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)

    def _validated(self, value: Any) -> int:
        if isinstance(value, bool):
            raise self.make_error("invalid")
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return super()._validated(value)


class StrictBoolean(fields.Boolean):
    """A JSON boolean: only true or false."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):
            raise self.make_error("invalid")
        return value


class IsoDate(fields.Date):
    """A calendar date written exactly as YYYY-MM-DD."""

    json_schema = {"pattern": DATE_PATTERN}
    default_error_messages = {"invalid": "Not a valid date; use YYYY-MM-DD, e.g. 2025-03-31."}

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if not isinstance(value, str) or not re.fullmatch(DATE_PATTERN, value):
            raise self.make_error("invalid")
        return super()._deserialize(value, attr, data, **kwargs)


class MajorAmount(fields.Decimal):
    """A non-negative amount in major units given as a decimal string, e.g. "42.50"."""

    json_schema = {"pattern": AMOUNT_PATTERN}
    default_error_messages = {
        "invalid": 'Not a valid amount; use a non-negative decimal string such as "25" or "42.50".'
    }

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        # Strings only: a JSON number may already have lost precision as a float.
        if not isinstance(value, str) or not re.fullmatch(AMOUNT_PATTERN, value):
            raise self.make_error("invalid")
        return super()._deserialize(value, attr, data, **kwargs)


class YearMonth(fields.String):
    """A month written as YYYY-MM between 1900 and 2099."""

    json_schema = {"pattern": MONTH_PATTERN}
    default_error_messages = {"invalid": "Not a valid month; use YYYY-MM, e.g. 2025-03."}

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        # fullmatch: a regex "$" would also accept a trailing newline.
        if not isinstance(value, str) or not re.fullmatch(MONTH_PATTERN, value):
            raise self.make_error("invalid")
        return value


class PositiveAmount(fields.Decimal):
    """An amount > 0 in major units with at most 2 decimals, e.g. "400" or "49.99"."""

    json_schema = {"pattern": POSITIVE_AMOUNT_PATTERN}
    default_error_messages = {
        "invalid": 'Not a valid amount; use a decimal string such as "400" or "49.99".',
        "not_positive": "The amount must be greater than 0.",
        "decimals": "Use at most 2 decimals, e.g. 49.99.",
        "too_large": f"The amount may be at most {MAX_POSITIVE_AMOUNT}.",
    }

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        # The pattern alone decides what is accepted (so the JSON Schema agrees); the rest
        # only picks the message that says what to fix.
        if isinstance(value, str) and re.fullmatch(POSITIVE_AMOUNT_PATTERN, value):
            return super()._deserialize(value, attr, data, **kwargs)
        if not isinstance(value, str) or not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", value):
            raise self.make_error("invalid")
        if value.startswith("-") or not value.strip("0."):
            raise self.make_error("not_positive")
        if "." in value and len(value.split(".")[1]) > 2:
            raise self.make_error("decimals")
        if len(value.split(".")[0].lstrip("0")) > 8:
            raise self.make_error("too_large")
        raise self.make_error("invalid")  # e.g. a leading zero, "0400"


class CurrencyCode(fields.String):
    """A 3-letter ISO 4217 currency code, any case, returned upper-case."""

    json_schema = {"pattern": CURRENCY_PATTERN}
    default_error_messages = {"invalid": 'Not a valid currency; use a 3-letter code, e.g. "USD".'}

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if not isinstance(value, str) or not re.fullmatch(CURRENCY_PATTERN, value):
            raise self.make_error("invalid")
        return value.upper()


class IdList(fields.String):
    """Transaction ids as a comma-separated string, e.g. "12,40"; loaded sorted, without repeats.

    Kept a string so that a `txns:` source (a URL query) carries it as it is.
    """

    json_schema = {"pattern": IDS_PATTERN}
    default_error_messages = {
        "invalid": f'Not a list of ids; use up to {MAX_IDS} ids separated by commas, e.g. "12,40".'
    }

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        if not isinstance(value, str) or not re.fullmatch(IDS_PATTERN, value):
            raise self.make_error("invalid")
        return ",".join(str(n) for n in sorted({int(n) for n in value.split(",")}))
