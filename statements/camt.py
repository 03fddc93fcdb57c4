"""ISO 20022 CAMT.053 bank-to-customer statements, read by an XML parser that refuses entities."""

from __future__ import annotations

from datetime import date
from decimal import Decimal, InvalidOperation
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from domain.money import minor_units
from statements.parsed import ParsedFile, ParsedRow, ParsedStatement, unparsable


def read_camt(data: bytes) -> ParsedFile:
    """Read every <Stmt> of a CAMT.053 file; a DTD or entity is refused before it is read."""
    try:
        root = fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as err:
        raise unparsable(
            "XML with a DTD or entities is refused (nothing in it was read).", element="DOCTYPE"
        ) from err
    except ParseError as err:
        line, column = err.position
        raise unparsable(
            f"it is not well-formed XML ({err.msg}).", line=line, column=column
        ) from err
    statements = [_statement(stmt) for stmt in root.iterfind(".//{*}BkToCstmrStmt/{*}Stmt")]
    if not statements:
        raise unparsable("it holds no CAMT.053 statement.", element="BkToCstmrStmt/Stmt")
    return ParsedFile("camt053", statements)


def _statement(stmt: Element) -> ParsedStatement:
    account = stmt.find("{*}Acct")
    iban = _text(account, "{*}Id/{*}IBAN") or _text(account, "{*}Id/{*}Othr/{*}Id")
    currency = (_text(account, "{*}Ccy") or "").upper() or None
    statement = ParsedStatement(bank_ref=iban, currency=currency)
    for bal in stmt.iterfind("{*}Bal"):
        code = _text(bal, "{*}Tp/{*}CdOrPrtry/{*}Cd")
        amount = _signed(bal, "Bal")
        statement.currency = statement.currency or amount[1]
        if code in ("OPBD", "PRCD"):
            statement.opening_minor = amount[0]
        elif code in ("CLBD",):
            statement.closing_minor = amount[0]
    for position, entry in enumerate(stmt.iterfind("{*}Ntry"), start=1):
        statement.rows.append(_entry(position, entry, statement.currency))
    return statement


def _entry(position: int, entry: Element, currency: str | None) -> ParsedRow:
    details = entry.find("{*}NtryDtls/{*}TxDtls")
    credit = _text(entry, "{*}CdtDbtInd") == "CRDT"
    # The other party: the creditor of money out, the debtor of money in.
    party = "{*}RltdPties/{*}Dbtr" if credit else "{*}RltdPties/{*}Cdtr"
    name = _text(details, f"{party}/{{*}}Nm") or _text(details, f"{party}/{{*}}Pty/{{*}}Nm")
    info = _text(details, "{*}RmtInf/{*}Ustrd") or _text(entry, "{*}AddtlNtryInf") or ""
    ref = _text(entry, "{*}AcctSvcrRef") or _text(entry, "{*}NtryRef")
    ref = ref or _text(details, "{*}Refs/{*}AcctSvcrRef")
    row = ParsedRow(
        position,
        None,
        None,
        merchant=(name or info)[:120],
        description=info[:255],
        bank_id=ref[:255] if ref else None,
        currency=currency,
    )
    try:
        row.amount_minor, row.currency = _signed(entry, "Ntry")
        row.posted_on = date.fromisoformat(
            (_text(entry, "{*}BookgDt/{*}Dt") or _text(entry, "{*}BookgDt/{*}DtTm") or "")[:10]
        )
    except ValueError as err:
        row.reason = f"entry {position}: {err}"
    return row


def _signed(node: Element, where: str) -> tuple[int, str]:
    amount = node.find("{*}Amt")
    if amount is None or not (amount.text or "").strip():
        raise ValueError(f"{where} has no Amt")
    currency = (amount.get("Ccy") or "").upper()
    try:
        value = Decimal(amount.text.strip())  # type: ignore[union-attr]
    except InvalidOperation as err:
        raise ValueError(f"{where}/Amt {amount.text!r} is not an amount") from err
    minor = int(value.scaleb(minor_units(currency or "EUR")).to_integral_value())
    return (-minor if _text(node, "{*}CdtDbtInd") == "DBIT" else minor), currency


def _text(node: Element | None, path: str) -> str | None:
    if node is None:
        return None
    found = node.find(path)
    text = found.text.strip() if found is not None and found.text else ""
    return text or None
