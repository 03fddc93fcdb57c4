"""SWIFT MT940 statements (mt-940): :25: names the account, :60F:/:62F: its balances."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import mt940

from domain.money import minor_units
from statements.parsed import ParsedFile, ParsedRow, ParsedStatement, unparsable


def read_mt940(text: str) -> ParsedFile:
    """Read an MT940 file's statement and its :61: entries (with their :86: details)."""
    try:
        parsed = mt940.parse(text)
    except Exception as err:  # mt-940 raises ValueError, KeyError, RuntimeError...
        raise unparsable(str(err)[:300] or type(err).__name__, element=":61:") from err
    info = parsed.data
    if "account_identification" not in info:
        raise unparsable("it names no account (:25:).", element=":25:")
    opening, closing = info.get("final_opening_balance"), info.get("final_closing_balance")
    currency = _currency(opening) or _currency(closing)
    statement = ParsedStatement(
        bank_ref=str(info["account_identification"])[:64],
        currency=currency,
        opening_minor=_minor(opening.amount) if opening is not None else None,
        closing_minor=_minor(closing.amount) if closing is not None else None,
    )
    for position, txn in enumerate(parsed, start=1):
        data = txn.data
        row_currency = str(data.get("currency") or currency or "EUR").upper()
        details = str(data.get("transaction_details") or "").replace("\n", " ").strip()
        bank_ref = data.get("bank_reference") or None
        if data.get("customer_reference") not in (None, "NONREF"):
            bank_ref = bank_ref or data["customer_reference"]
        statement.rows.append(
            ParsedRow(
                position,
                data["date"],
                int(Decimal(data["amount"].amount).scaleb(minor_units(row_currency))),
                merchant=details[:120],
                description=details[:255],
                bank_id=str(bank_ref)[:255] if bank_ref else None,
                currency=row_currency,
            )
        )
    return ParsedFile("mt940", [statement])


def _currency(balance: Any) -> str | None:
    return str(balance.amount.currency).upper() if balance is not None else None


def _minor(amount: Any) -> int:
    currency = str(amount.currency).upper()
    return int(Decimal(amount.amount).scaleb(minor_units(currency)))
