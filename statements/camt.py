"""ISO 20022 CAMT.052 (reports), CAMT.053 (statements) and CAMT.054 (notifications), every
version: each Rpt, Stmt or Ntfctn is a statement, each Ntry a row. Read as a stream of
elements by an XML parser that refuses a DTD or entity before anything is read; each entry is
dropped once read, so memory stays flat."""

from __future__ import annotations

from datetime import date
from xml.etree.ElementTree import Element, TreeBuilder
from xml.parsers import expat

from defusedxml import (
    DefusedXmlException,
    DTDForbidden,
    EntitiesForbidden,
    ExternalReferenceForbidden,
)

from statements.amounts import POINT, quoted
from statements.parsed import (
    ParsedFile,
    ParsedRow,
    ParsedStatement,
    RowSink,
    Tally,
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
# The elements whose end the reader reads; and how many tags it remembers it for.
WANTED = frozenset((*STATEMENTS, *PARTS, "CreDtTm"))
MAX_TAGS = 1024
# How many namespaces _paths remembers local names in.
NAMESPACES = 8


def read_camt(data: bytes, currency: str | None = None, sink: RowSink | None = None) -> ParsedFile:
    """Read every statement of a CAMT.052, .053 or .054 file. Its rows are kept (the file is
    at most IMPORT_MAX_BYTES; a second parse would cost more than they take), or each handed
    to the `sink` if there is one."""
    kinds: list[str] = []
    not_imported: list[str] = []
    statements = _read(data, currency, kinds, not_imported, sink)
    if not statements:
        raise unparsable("it holds no CAMT statement, report or notification.", element="Stmt")
    checked(statements, "statement", not_imported)
    return ParsedFile(kinds[0] if kinds else "camt053", statements, not_imported=not_imported)


def _read(
    data: bytes,
    currency: str | None,
    kinds: list[str],
    not_imported: list[str],
    sink: RowSink | None = None,
) -> list[ParsedStatement]:
    """The statements and their rows, from the end of each element (an entry is dropped once
    read): a statement's parts are its children Acct, Bal and Ntry.

    Expat builds the elements with the C TreeBuilder (no Python code per element but at its
    end), refusing what defusedxml refuses: a DTD, entity declarations, external references.
    Tags are expat's `namespace}name` (no leading `{`)."""
    reader = _Reader(currency, kinds, not_imported, sink)
    builder = TreeBuilder()
    close = builder.end
    # Each tag's local name if the reader wants its end (a statement, its parts, a date),
    # else "": looked up once per tag.
    wanted: dict[str, str] = {}

    def end(tag: str) -> None:
        element = close(tag)
        name = wanted.get(tag)
        if name is None:
            name = _local(tag)
            name = name if name in WANTED else ""
            if len(wanted) < MAX_TAGS:
                wanted[tag] = name
        if name == "Ntry":
            reader.entry(element)
        elif name:
            reader.ended(name, element)

    parser = expat.ParserCreate(None, "}")
    parser.buffer_text = True
    parser.StartDoctypeDeclHandler = _no_dtd
    parser.EntityDeclHandler = _no_entity
    parser.UnparsedEntityDeclHandler = _no_unparsed_entity
    parser.ExternalEntityRefHandler = _no_external_reference
    parser.StartElementHandler = builder.start
    parser.CharacterDataHandler = builder.data
    parser.EndElementHandler = end
    try:
        parser.Parse(data, True)
    except DefusedXmlException as err:
        raise unparsable(
            "XML with a DTD or entities is refused (nothing in it was read).", element="DOCTYPE"
        ) from err
    except expat.ExpatError as err:
        line, column = err.lineno, err.offset
        raise unparsable(
            f"it is not well-formed XML (line {line}).", line=line, column=column
        ) from err
    except LookupError as err:  # the XML declaration names an encoding nobody knows
        raise unparsable(
            "its XML declaration names an encoding that is not known.", line=1
        ) from err
    return reader.statements


class _Reader:
    """What the end of each element does: a statement, one of its parts, or a date."""

    def __init__(
        self,
        currency: str | None,
        kinds: list[str],
        not_imported: list[str],
        sink: RowSink | None,
    ) -> None:
        self.currency, self.sink = currency, sink
        self.kinds, self.not_imported = kinds, not_imported
        self.statements: list[ParsedStatement] = []
        self.statement: ParsedStatement | None = None
        self.tally = Tally()
        self.created: str | None = None  # the message's or statement's date, for entries
        self.number = 1
        self.names: dict[str, dict[str, str]] = {}  # _paths' local names of tags

    def entry(self, element: Element) -> None:
        """An entry (Ntry) ended: its row, read and handed on or kept; the element cleared."""
        if self.statement is None:
            self.statement = ParsedStatement()
        statement = self.statement
        currency = statement.currency or self.currency
        row = _entry(self.number, element, currency, self.created, self.names)
        statement.currency = statement.currency or row.currency
        if self.sink is not None:
            self.tally.add(row)
            self.sink.row(row)
        else:
            statement.rows.append(row)
        self.number += 1
        element.clear()

    def ended(self, name: str, element: Element) -> None:
        """The element `name` (its local name), one the reader wants, ended."""
        if name in STATEMENTS:
            statement = self.statement or ParsedStatement()
            statement.currency = statement.currency or self.currency
            if self.sink is not None:  # the same rows as kept: no bank id is dropped
                statement.streamed_span, self.tally = self.tally.span(), Tally()
                self.sink.end(statement, frozenset())
            self.statements.append(statement)
            self.kinds.append(STATEMENTS[name])
            self.statement = None
            element.clear()
        elif name in PARTS:
            if name == "Ntry":
                self.entry(element)
                return
            if self.statement is None:
                self.statement = ParsedStatement()
            _statement_part(self.statement, name, element, self.not_imported, self.names)
        elif name == "CreDtTm":
            self.created = (element.text or "").strip() or self.created


def _no_dtd(name: str, sysid: str | None, pubid: str | None, internal: bool) -> None:
    raise DTDForbidden(name, sysid, pubid)


def _no_entity(
    name: str,
    parameter: bool,
    value: str | None,
    base: str | None,
    sysid: str | None,
    pubid: str | None,
    notation: str | None,
) -> None:
    raise EntitiesForbidden(name, value, base, sysid, pubid, notation)


def _no_unparsed_entity(
    name: str, base: str | None, sysid: str | None, pubid: str | None, notation: str | None
) -> None:
    raise EntitiesForbidden(name, None, base, sysid, pubid, notation)


def _no_external_reference(
    context: str, base: str | None, sysid: str | None, pubid: str | None
) -> int:
    raise ExternalReferenceForbidden(context, base, sysid, pubid)


def _statement_part(
    statement: ParsedStatement,
    name: str,
    element: Element,
    not_imported: list[str],
    names: dict[str, dict[str, str]],
) -> None:
    """The account (Acct) or a balance (Bal) of a statement."""
    at = _paths(element, names)
    if name == "Acct":
        number = _text(at, "Id/IBAN") or _text(at, "Id/Othr/Id")
        number = number or _text(at, "Id/PrtryAcct/Id")
        statement.bank_ref = number[:64] if number else None
        statement.last_digits = last_digits(number)
        statement.currency = (_text(at, "Ccy") or "").upper()[:3] or statement.currency
        statement.name = (_text(at, "Nm") or "")[:80] or None
        statement.kind = KINDS.get(_text(at, "Tp/Cd") or "", "checking")
        servicer = "Svcr/FinInstnId/"
        statement.bank_name = (
            _text(at, servicer + "BIC")
            or _text(at, servicer + "BICFI")
            or _text(at, servicer + "Nm")
            or _text(at, servicer + "NmAndAdr/Nm")
        )
    elif name == "Bal":
        code = _text(at, "Tp/CdOrPrtry/Cd")
        if code not in OPENING and code not in CLOSING:
            return
        try:
            minor, named = _signed(at, statement.currency, _text(at, "CdtDbtInd"))
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


# The other party of an entry: the debtor of money in, the creditor of money out (else
# whichever), each by its name, then its party's name.
_PARTIES = ("Dbtr", "UltmtDbtr", "Cdtr", "UltmtCdtr")
_NAMES = {
    credit: tuple(
        path
        for party in (_PARTIES if credit else _PARTIES[2:] + _PARTIES[:2])
        for path in (
            f"NtryDtls/TxDtls/RltdPties/{party}/Nm",
            f"NtryDtls/TxDtls/RltdPties/{party}/Pty/Nm",
        )
    )
    for credit in (True, False)
}


def _entry(
    number: int,
    entry: Element,
    currency: str | None,
    created: str | None,
    names: dict[str, dict[str, str]],
) -> ParsedRow:
    at = _paths(entry, names)
    indicator = _text(at, "CdtDbtInd")
    name = ""
    for path in _NAMES[indicator == "CRDT"] if "NtryDtls/TxDtls/RltdPties" in at else ():
        name = _text(at, path) or ""
        if name:
            break
    remittance = at.get("NtryDtls/TxDtls/RmtInf")
    info = (
        " ".join((part.text or "").strip() for part in _children(remittance, "Ustrd") if part.text)
        if remittance is not None
        else ""
    )
    info = info or _text(at, "NtryDtls/TxDtls/AddtlTxInf") or _text(at, "AddtlNtryInf") or ""
    reference = _text(at, "AcctSvcrRef") or _text(at, "NtryDtls/TxDtls/Refs/AcctSvcrRef")
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
    try:
        row.amount_minor, named = _signed(at, currency, indicator)
        row.currency = named or currency
        day = _text(at, "BookgDt/Dt") or _text(at, "BookgDt/DtTm")
        day = day or _text(at, "ValDt/Dt") or _text(at, "ValDt/DtTm") or created
        if not day:
            raise ValueError("it has no BookgDt")
        try:
            row.posted_on = date.fromisoformat(day[:10])
        except ValueError as err:
            raise ValueError(f"BookgDt {quoted(day)} is not a date") from err
    except ValueError as err:
        row.reason = f"Ntry {number}: {err}"
    return row


def _signed(
    at: dict[str, Element], currency: str | None, indicator: str | None
) -> tuple[int, str | None]:
    """A balance's or entry's Amt (`at`: its paths), negative when its CdtDbtInd
    (`indicator`) is DBIT."""
    amount = at.get("Amt")
    text = (amount.text or "").strip() if amount is not None else ""
    if amount is None or not text:
        raise ValueError("it has no Amt")
    named = (amount.get("Ccy") or "").upper()[:3] or None
    minor = POINT.minor(text, named or currency, rounded=True)
    return (-minor if indicator == "DBIT" else minor), named


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _paths(node: Element, names: dict[str, dict[str, str]] | None = None) -> dict[str, Element]:
    """The elements below `node` by their paths of local names, each path the first element
    it names: at each step the first child of that name in the node's namespace (later
    children of the same name, and what they hold, are never reached by a path). `names`
    keeps, per namespace, each tag's local name in it ("" for one of another namespace),
    found once per tag (at most MAX_TAGS tags, NAMESPACES namespaces)."""
    tag = node.tag
    namespace = tag[: tag.index("}") + 1] if "}" in tag else ""
    local: dict[str, str] = {}
    if names is not None and (namespace in names or len(names) < NAMESPACES):
        local = names.setdefault(namespace, local)
    found: dict[str, Element] = {}
    todo: list[tuple[str, Element]] = [("", node)]
    while todo:
        prefix, parent = todo.pop()
        for child in parent:
            tag = child.tag
            name = local.get(tag)
            if name is None:
                name = _in(tag, namespace)
                if len(local) < MAX_TAGS:
                    local[tag] = name
            if not name:
                continue
            path = prefix + name
            if path not in found:
                found[path] = child
                if len(child):
                    todo.append((path + "/", child))
    return found


def _in(tag: str, namespace: str) -> str:
    """The local name of `tag` if it is in `namespace` ("" when none), else ""."""
    if namespace:
        return tag[len(namespace) :] if tag.startswith(namespace) else ""
    return "" if "}" in tag else tag


def _children(holder: Element | None, name: str) -> list[Element]:
    """Every child of `holder` with this local name (in any namespace)."""
    if holder is None:
        return []
    return [child for child in holder if _local(child.tag) == name]


def _text(at: dict[str, Element], path: str) -> str | None:
    found = at.get(path)
    text = found.text.strip() if found is not None and found.text else ""
    return text or None
