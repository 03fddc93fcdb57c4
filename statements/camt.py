"""ISO 20022 CAMT.052 (reports), CAMT.053 (statements) and CAMT.054 (notifications), every
version: each Rpt, Stmt or Ntfctn is a statement, each Ntry a row. Read as a stream of
elements by an XML parser that refuses a DTD or entity before anything is read; each entry is
dropped once read, so memory stays flat."""

from __future__ import annotations

import io
from datetime import date
from functools import lru_cache
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from statements.amounts import POINT, quoted
from statements.parsed import (
    ParsedFile,
    ParsedRow,
    ParsedStatement,
    checked,
    last_digits,
    unparsable,
)

# The element each message kind wraps an account's entries in.
STATEMENTS = {"Stmt": "camt053", "Rpt": "camt052", "Ntfctn": "camt054"}
OPENING = ("OPBD", "PRCD")
CLOSING = ("CLBD",)
KINDS = {"SVGS": "savings", "CARD": "credit_card", "CCRD": "credit_card"}
# References that say there is none.
NO_REFERENCE = frozenset(("NONREF", "NOTPROVIDED", "NOT PROVIDED", "NONE", "N/A"))
# A statement's parts read when they end (the account is read before its balances and entries).
PARTS = frozenset(("Acct", "Bal", "Ntry"))


def read_camt(data: bytes, currency: str | None = None) -> ParsedFile:
    """Read every statement of a CAMT.052, .053 or .054 file. Its rows are kept (the file is
    at most IMPORT_MAX_BYTES; a second parse would cost more than they take)."""
    kinds: list[str] = []
    not_imported: list[str] = []
    statements = _read(data, currency, kinds, not_imported)
    if not statements:
        raise unparsable("it holds no CAMT statement, report or notification.", element="Stmt")
    checked(statements, "statement", not_imported)
    return ParsedFile(kinds[0] if kinds else "camt053", statements, not_imported=not_imported)


def _read(
    data: bytes, currency: str | None, kinds: list[str], not_imported: list[str]
) -> list[ParsedStatement]:
    """The statements and their rows, from the end of each element (an entry is dropped once
    read): a statement's parts are its children Acct, Bal and Ntry."""
    statements: list[ParsedStatement] = []
    statement: ParsedStatement | None = None
    created: str | None = None  # the message's or statement's date, for entries without one
    number = 1
    try:
        for _event, element in iterparse(
            io.BytesIO(data),
            events=("end",),
            forbid_dtd=True,
            forbid_entities=True,
            forbid_external=True,
        ):
            name = _local(element.tag)
            if name in STATEMENTS:
                if statement is None:
                    statement = ParsedStatement()
                statement.currency = statement.currency or currency
                statements.append(statement)
                kinds.append(STATEMENTS[name])
                statement = None
                element.clear()
            elif name in PARTS:
                if statement is None:
                    statement = ParsedStatement()
                if name == "Ntry":
                    row = _entry(number, element, statement.currency or currency, created)
                    statement.currency = statement.currency or row.currency
                    statement.rows.append(row)
                    number += 1
                    element.clear()
                else:
                    _statement_part(statement, name, element, not_imported)
            elif name == "CreDtTm":
                created = (element.text or "").strip() or created
    except DefusedXmlException as err:
        raise unparsable(
            "XML with a DTD or entities is refused (nothing in it was read).", element="DOCTYPE"
        ) from err
    except ParseError as err:
        line, column = err.position
        raise unparsable(
            f"it is not well-formed XML (line {line}).", line=line, column=column
        ) from err
    return statements


def _statement_part(
    statement: ParsedStatement, name: str, element: Element, not_imported: list[str]
) -> None:
    """The account (Acct) or a balance (Bal) of a statement."""
    if name == "Acct":
        number = _text(element, "Id/IBAN") or _text(element, "Id/Othr/Id")
        number = number or _text(element, "Id/PrtryAcct/Id")
        statement.bank_ref = number[:64] if number else None
        statement.last_digits = last_digits(number)
        statement.currency = (_text(element, "Ccy") or "").upper()[:3] or statement.currency
        statement.name = (_text(element, "Nm") or "")[:80] or None
        statement.kind = KINDS.get(_text(element, "Tp/Cd") or "", "checking")
        servicer = "Svcr/FinInstnId/"
        statement.bank_name = (
            _text(element, servicer + "BIC")
            or _text(element, servicer + "BICFI")
            or _text(element, servicer + "Nm")
            or _text(element, servicer + "NmAndAdr/Nm")
        )
    elif name == "Bal":
        code = _text(element, "Tp/CdOrPrtry/Cd")
        if code not in OPENING and code not in CLOSING:
            return
        try:
            minor, named = _signed(element, statement.currency)
        except ValueError as err:
            not_imported.append(
                f"the {code} balance of {statement.bank_ref or 'the account'}: {err}"
            )
            return
        statement.currency = statement.currency or named
        if code in OPENING and statement.opening_minor is None:
            statement.opening_minor = minor
        elif code in CLOSING:
            statement.closing_minor = minor


def _entry(number: int, entry: Element, currency: str | None, created: str | None) -> ParsedRow:
    details = _find(entry, "NtryDtls/TxDtls")
    credit = _text(entry, "CdtDbtInd") == "CRDT"
    # The other party: the debtor of money in, the creditor of money out (else whichever).
    parties = ("Dbtr", "UltmtDbtr", "Cdtr", "UltmtCdtr")
    name = ""
    for party in parties if credit else parties[2:] + parties[:2]:
        name = _text(details, f"RltdPties/{party}/Nm") or ""
        name = name or _text(details, f"RltdPties/{party}/Pty/Nm") or ""
        if name:
            break
    info = " ".join(
        (part.text or "").strip() for part in _iter(details, "RmtInf/Ustrd") if part.text
    )
    info = info or _text(details, "AddtlTxInf") or _text(entry, "AddtlNtryInf") or ""
    reference = _text(entry, "AcctSvcrRef") or _text(details, "Refs/AcctSvcrRef")
    if reference is not None and reference.upper() in NO_REFERENCE:
        reference = None
    row = ParsedRow(
        number,
        None,
        None,
        merchant=(name or info)[:120],
        description=info[:255],
        bank_id=reference[:255] if reference else None,
        currency=currency,
    )
    where = f"Ntry {number}"
    try:
        row.amount_minor, named = _signed(entry, currency)
        row.currency = named or currency
        day = _text(entry, "BookgDt/Dt") or _text(entry, "BookgDt/DtTm")
        day = day or _text(entry, "ValDt/Dt") or _text(entry, "ValDt/DtTm") or created
        if not day:
            raise ValueError("it has no BookgDt")
        try:
            row.posted_on = date.fromisoformat(day[:10])
        except ValueError as err:
            raise ValueError(f"BookgDt {quoted(day)} is not a date") from err
    except ValueError as err:
        row.reason = f"{where}: {err}"
    return row


def _signed(node: Element, currency: str | None) -> tuple[int, str | None]:
    """A balance's or entry's Amt, negative when its CdtDbtInd is DBIT."""
    amount = _find(node, "Amt")
    text = (amount.text or "").strip() if amount is not None else ""
    if amount is None or not text:
        raise ValueError("it has no Amt")
    named = (amount.get("Ccy") or "").upper()[:3] or None
    minor = POINT.read(text, named or currency, rounded=True).minor
    return (-minor if _text(node, "CdtDbtInd") == "DBIT" else minor), named


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _find(node: Element | None, path: str) -> Element | None:
    """The first element at `path` (local names, in the node's namespace), found a child at a
    time (each step a plain tag: the C lookup, no path parsing)."""
    if node is None:
        return None
    tag = node.tag
    namespace = tag[: tag.index("}") + 1] if tag.startswith("{") else ""
    found: Element = node
    for part in _steps(path):
        step = found.find(namespace + part)
        if step is None:
            return None
        found = step
    return found


@lru_cache(maxsize=128)
def _steps(path: str) -> tuple[str, ...]:
    return tuple(path.split("/"))


def _iter(node: Element | None, path: str) -> list[Element]:
    """Every element at `path`: the children named by its last step of the first element at
    the steps before it."""
    parent, _, last = path.rpartition("/")
    holder = _find(node, parent) if parent else node
    if holder is None:
        return []
    return [child for child in holder if _local(child.tag) == last]


def _text(node: Element | None, path: str) -> str | None:
    found = _find(node, path)
    text = found.text.strip() if found is not None and found.text else ""
    return text or None
