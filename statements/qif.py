"""Quicken QIF files (quiffen): no account details, so the caller names the account."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import quiffen

from domain.money import minor_units
from statements.parsed import ParsedFile, ParsedRow, ParsedStatement, unparsable


def read_qif(text: str, *, currency: str | None, day_first: bool) -> ParsedFile:
    """Read every transaction of a QIF file, in the order the file lists them."""
    try:
        qif = quiffen.Qif.parse_string(text, day_first=day_first)
    except Exception as err:  # quiffen raises ValueError, pydantic errors, ParserException...
        raise unparsable(
            str(err).splitlines()[0][:300] if str(err) else type(err).__name__
        ) from err
    found: list[Any] = [
        txn
        for account in qif.accounts.values()
        for listed in account.transactions.values()
        for txn in listed
    ]
    if not found:
        raise unparsable("it holds no transactions.", element="!Type")
    statement = ParsedStatement(currency=currency)
    units = minor_units(currency or "EUR")
    for position, txn in enumerate(sorted(found, key=lambda t: t.line_number or 0), start=1):
        payee, memo = str(txn.payee or ""), str(txn.memo or "")
        statement.rows.append(
            ParsedRow(
                txn.line_number or position,
                txn.date.date(),
                int(Decimal(txn.amount).scaleb(units)),
                merchant=(payee or memo)[:120],
                description=memo[:255],
                currency=currency,
            )
        )
    return ParsedFile("qif", [statement])
