"""ISO 20022 CAMT.052 (reports), CAMT.053 (statements) and CAMT.054 (notifications), every
version: each Rpt, Stmt or Ntfctn is a statement, each Ntry a row. Read as a stream of
elements by an XML parser that refuses a DTD or entity before anything is read; each entry is
dropped once read, so memory stays flat."""

from __future__ import annotations

import io
from collections.abc import Iterator
from datetime import date
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import iterparse

from statements.amounts import POINT, quoted
from statements.parsed import (
    End,
    ParsedFile,
    ParsedRow,
    ParsedStatement,
    checked,
    last_digits,
    read_twice,
    unparsable,
)

# The element each message kind wraps an account's entries in.
STATEMENTS = {"Stmt": "camt053", "Rpt": "camt052", "Ntfctn": "camt054"}
OPENING = ("OPBD", "PRCD")
CLOSING = ("CLBD",)
KINDS = {"SVGS": "savings", "CARD": "credit_card", "CCRD": "credit_card"}
# References that say there is none.
NO_REFERENCE = frozenset(("NONREF", "NOTPROVIDED", "NOT PROVIDED", "NONE", "N/A"))
# Resume point of a statement's second scan: (its index in the file, number of its first entry).
Resume = tuple[int, int]


def read_camt(data: bytes, currency: str | None = None) -> ParsedFile:
    """Read every statement of a CAMT.052, .053 or .054 file."""
    kinds: list[str] = []
    not_imported: list[str] = []

    def scan(resume: Resume) -> Iterator[ParsedRow | End]:
        return _scan(data, resume, currency, kinds, not_imported)

    statements = read_twice(scan, (-1, 1))
    if not statements:
        raise unparsable("it holds no CAMT statement, report or notification.", element="Stmt")
    checked(statements, "statement", not_imported)
    return ParsedFile(kinds[0] if kinds else "camt053", statements, not_imported=not_imported)


def _scan(
    data: bytes, resume: Resume, currency: str | None, kinds: list[str], not_imported: list[str]
) -> Iterator[ParsedRow | End]:
    """From the start (`resume` (-1, 1)): every statement; else the one at index `resume[0]`."""
    wanted, number = resume
    whole = wanted < 0
    index, first = 0, number
    created: str | None = None  # the message's or statement's date, for entries without one
    statement: ParsedStatement | None = None
    stack: list[Element] = []
    try:
        for event, element in iterparse(
            io.BytesIO(data),
            events=("start", "end"),
            forbid_dtd=True,
            forbid_entities=True,
            forbid_external=True,
        ):
            name = _local(element.tag)
            if event == "start":
                stack.append(element)
                if name in STATEMENTS and (whole or index == wanted):
                    statement, first = ParsedStatement(), number
                    if whole:
                        kinds.append(STATEMENTS[name])
                continue
            stack.pop()
            if name == "Ntry":
                if statement is not None:
                    row = _entry(number, element, statement.currency or currency, created)
                    statement.currency = statement.currency or row.currency
                    yield row
                    number += 1
            elif name in STATEMENTS:
                if statement is not None:
                    statement.currency = statement.currency or currency
                    yield End(statement, (index, first))
                    statement = None
                    if not whole:
                        return
                index += 1
            elif statement is not None and stack and _local(stack[-1].tag) in STATEMENTS:
                _statement_part(statement, name, element, not_imported if whole else [])
                created = (element.text or "").strip() if name == "CreDtTm" else created
            elif name == "CreDtTm" and stack and _local(stack[-1].tag) == "GrpHdr":
                created = (element.text or "").strip()
                continue
            else:
                continue
            if stack:
                stack[-1].remove(element)
    except DefusedXmlException as err:
        raise unparsable(
            "XML with a DTD or entities is refused (nothing in it was read).", element="DOCTYPE"
        ) from err
    except ParseError as err:
        line, column = err.position
        raise unparsable(
            f"it is not well-formed XML (line {line}).", line=line, column=column
        ) from err


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
    minor = POINT.read(text, named or currency).minor
    return (-minor if _text(node, "CdtDbtInd") == "DBIT" else minor), named


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _find(node: Element | None, path: str) -> Element | None:
    """The first element at `path` (local names, any namespace)."""
    if node is None:
        return None
    return node.find("/".join(f"{{*}}{part}" for part in path.split("/")))


def _iter(node: Element | None, path: str) -> list[Element]:
    if node is None:
        return []
    return node.findall("/".join(f"{{*}}{part}" for part in path.split("/")))


def _text(node: Element | None, path: str) -> str | None:
    found = _find(node, path)
    text = found.text.strip() if found is not None and found.text else ""
    return text or None
