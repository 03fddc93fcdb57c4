"""OFX and QFX statements, 1.x (SGML) and 2.x (XML), any number of accounts (ofxtools)."""

from __future__ import annotations

import io
import re
from decimal import Decimal
from typing import Any

from ofxtools.Parser import OFXTree

from domain.money import minor_units
from statements.parsed import ParsedFile, ParsedRow, ParsedStatement, unparsable

KINDS = {
    "CHECKING": "checking",
    "SAVINGS": "savings",
    "MONEYMRKT": "savings",
    "CREDITLINE": "credit_card",
}


def read_ofx(data: bytes) -> ParsedFile:
    """Read every bank and card statement of an OFX/QFX file; 422 naming what does not parse."""
    tree = OFXTree()
    try:
        tree.parse(io.BytesIO(data))
        ofx = tree.convert()
    except Exception as err:  # ofxtools raises many kinds (ParseError, ValueError, KeyError...)
        raise unparsable(_why(err), element=_element(err)) from err
    statements = [_statement(s) for s in getattr(ofx, "statements", [])]
    if not statements:
        raise unparsable("it holds no bank or card statement.", element="STMTRS")
    return ParsedFile("ofx", statements)


def _statement(stmt: Any) -> ParsedStatement:
    currency = str(stmt.curdef).upper()
    account = stmt.account
    kind = (
        "credit_card"
        if type(stmt).__name__ == "CCSTMTRS"
        else KINDS.get(str(getattr(account, "accttype", "") or ""), "checking")
    )
    ledger = stmt.ledgerbal
    statement = ParsedStatement(
        bank_ref=str(account.acctid),
        currency=currency,
        kind=kind,
        closing_minor=_minor(ledger.balamt, currency) if ledger is not None else None,
    )
    for position, txn in enumerate(stmt.banktranlist or [], start=1):
        row_currency = currency
        if getattr(txn, "currency", None) is not None and txn.currency.cursym:
            row_currency = str(txn.currency.cursym).upper()
        name = str(txn.name or (txn.payee.name if txn.payee is not None else "") or "")
        memo = str(txn.memo or "")
        statement.rows.append(
            ParsedRow(
                position,
                txn.dtposted.date(),
                _minor(txn.trnamt, row_currency),
                merchant=(name or memo)[:120],
                description=memo[:255],
                bank_id=str(txn.fitid)[:255] if txn.fitid else None,
                currency=row_currency,
            )
        )
    return statement


def _minor(amount: Decimal, currency: str) -> int:
    return int(Decimal(amount).scaleb(minor_units(currency)).to_integral_value())


def _why(err: Exception) -> str:
    text = str(err).strip() or type(err).__name__
    return text if len(text) < 300 else text[:300] + "..."


def _element(err: Exception) -> str | None:
    found = re.search(r"\b([A-Z][A-Z0-9]{2,})\b", str(err))
    return found.group(1) if found else None
