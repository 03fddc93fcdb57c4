"""A CSV statement's columns: which row is the header (below any preamble), what each column
holds (by its name, in several languages), and what a headerless file's columns hold."""

from __future__ import annotations

import re
import unicodedata

from statements.amounts import SYMBOLS

ROLES = (
    "date", "amount", "debit", "credit", "indicator", "payee", "payer", "description",
    "bank_id", "currency", "local_amount", "local_currency", "balance", "fee", "status",
    "account",
)  # fmt: skip
# What a mapping may say besides roles, and the values each option takes.
OPTIONS: dict[str, tuple[str, ...]] = {
    "sign": ("as_written", "charges_positive"),
    "date_order": ("dmy", "mdy", "ymd"),
}
# Header names banks use, normalised (lower case, letters and digits only, umlauts spelt out).
# Exact names are tried for every role first, then names that start a header (4 letters +).
NAMES: dict[str, tuple[str, ...]] = {
    "local_amount": (
        "localamount", "amountforeigncurrency", "originalamount", "oorsprbedrag",
        "foreignamount", "ursprungsbetrag",
    ),
    "local_currency": (
        "localcurrency", "typeforeigncurrency", "originalcurrency", "oorsprmunt",
        "foreigncurrency", "ursprungswaehrung",
    ),
    "date": (
        "date", "bookingdate", "transactiondate", "posted", "posteddate", "postingdate",
        "buchungstag", "buchungsdatum", "buchung", "datum", "fecha", "data", "dateoperation",
        "transdate", "completeddate", "dateexecution", "valuedate", "created",
        "transactiedatum", "boekdatum", "boekingsdatum", "belegdatum", "tranzakciodatuma",
    ),
    "amount": (
        "amount", "betrag", "montant", "importe", "transactionamount", "bedrag",
        "net", "value", "umsatzineur", "bedrageur", "amounteur", "buchungsbetrag", "castka",
        "zauctovanacastka", "tranzakciooesszege",
    ),
    "debit": (
        "debit", "debitamount", "withdrawal", "withdrawals", "moneyout", "paidout", "soll",
        "ausgang", "belastung", "debet", "charges",
    ),
    "credit": (
        "credit", "creditamount", "deposit", "deposits", "moneyin", "paidin", "haben",
        "eingang", "gutschrift",
    ),
    "indicator": (
        "afbij", "creditdebit", "debitcredit", "drcr", "sollhaben", "cdindicator", "creditdebet",
        "debetcredit",
    ),
    "payee": (
        "payee", "merchant", "name", "counterparty", "beguenstigterzahlungspflichtiger",
        "zahlungsempfaenger", "zahlungsempfaengerin", "empfaenger", "partner", "partnername",
        "beneficiary", "auftraggeberempfaenger", "nameauftraggeberzahlungsempfaenger",
        "beguenstigterauftraggeber", "naamtegenpartij", "naamomschrijving",
        "nomdelacontrepartie", "namezahlungsbeteiligter", "payeename", "handelaar",
        "tegenrekeninghouder", "nazevprotiuctu", "partnerneve",
    ),
    "payer": ("payer", "zahlungspflichtiger", "zahlungspflichtige", "payername"),
    "description": (
        "description", "memo", "details", "verwendungszweck", "purpose", "reference",
        "narrative", "buchungstext", "text", "libelle", "concepto", "transactiondescription",
        "paymentreference", "omschrijving1", "omschrijving", "mededelingen", "communication",
        "detail", "desc", "transaktionsbeschreibung", "toelichting", "note", "notes",
        "transaction", "zprava",
    ),
    "bank_id": (
        "id", "transactionid", "fitid", "referencenumber", "bankreference", "umsatzid",
        "transferwiseid", "volgnr",
    ),
    "currency": (
        "currency", "waehrung", "devise", "ccy", "munt", "devisedecompte", "devizanem",
    ),
    "balance": (
        "balance", "runningbal", "runningbalance", "saldo", "kontostand", "saldonatrn",
        "saldonamutatie", "saldonachbuchung", "solde",
    ),
    "fee": ("fee", "fees"),
    "status": ("status", "state", "statut", "balanceimpact"),
}  # fmt: skip
SPELT = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})
_HEADER_CURRENCY = re.compile(r"[(\[]\s*([A-Z]{3}|[€£$])\s*[)\]]|\bin\s+([A-Z]{3})\b")
_DATE_CELL = re.compile(
    r"\s*(\d{1,4}[./-]\d{1,2}[./-]\d{1,4}|\d{8}|\d{1,2}[ .-]+[^\W\d_]{3,9}\.?[ .-]+\d{2,4})\b"
)
_NUMBER_CELL = re.compile(r"\s*[-+(]?\s*[€£$]?\s*\d[\d.,' ]*[)-]?\s*([A-Z]{3}|[€£$])?\s*")
_HAS_DATE = re.compile(r"\d{1,4}[./-]\d{1,2}[./-]\d{1,4}")
HEADERLESS = "Column {}"


def normalise(name: str) -> str:
    """A header name as NAMES spells it: `Betrag (EUR)` is `betrageur`."""
    folded = unicodedata.normalize("NFC", name).casefold().translate(SPELT)
    plain = unicodedata.normalize("NFKD", folded)
    return re.sub(r"[^a-z0-9]", "", "".join(c for c in plain if not unicodedata.combining(c)))


def unique(columns: list[str]) -> list[str]:
    """Header names made unique (a second `Währung` is `Währung (2)`), trailing empty ones
    dropped, each stripped."""
    cells = [c.strip() for c in columns]
    while cells and not cells[-1]:
        cells.pop()
    seen: dict[str, int] = {}
    named: list[str] = []
    for at, cell in enumerate(cells):
        name = cell or HEADERLESS.format(at + 1)
        count = seen.get(name, 0) + 1
        seen[name] = count
        named.append(name if count == 1 else f"{name} ({count})")
    return named


def recognise(columns: list[str]) -> dict[str, str]:
    """The roles whose header this file's columns name: exactly first, then as a prefix; a
    role's names are tried in their order (`Description` before `Details`)."""
    found: dict[str, str] = {}
    keys = [normalise(c) for c in columns]
    for exact in (True, False):
        for role, names in NAMES.items():
            if role in found:
                continue
            column = _first(columns, keys, names, exact, set(found.values()))
            if column is not None:
                found[role] = column
    for role in ("date", "amount"):  # JournalDate, NetAmount: a name that ends a header
        if role not in found:
            taken = set(found.values())
            ending = [c for c, k in zip(columns, keys, strict=True) if k.endswith(role)]
            column = next((c for c in ending if c not in taken), None)
            if column is not None:
                found[role] = column
    if "debit" in found and "credit" not in found and "amount" in found:
        del found["debit"]  # a lone "Debit"/"Charges" beside an amount is no amount column
    return found


def _first(
    columns: list[str], keys: list[str], names: tuple[str, ...], exact: bool, taken: set[str]
) -> str | None:
    for name in names:
        if not exact and len(name) < 4:
            continue
        for column, key in zip(columns, keys, strict=True):
            if column in taken or not key:
                continue
            if key == name if exact else key.startswith(name) and not _dated(key, name):
                return column
    return None


def _dated(key: str, name: str) -> bool:
    """A date's header that a shorter name starts (`Value date` is not the amount `value`)."""
    return key.endswith(("date", "datum")) and not name.endswith(("date", "datum"))


def is_header(cells: list[str]) -> bool:
    """Whether a row names a date column and an amount (or debit and credit) column, and
    holds no value (a date or a number) as a preamble's line does."""
    if any(_HAS_DATE.search(c[:60]) or numberlike(c) for c in cells):
        return False
    found = recognise(unique(cells))
    return "date" in found and ("amount" in found or {"debit", "credit"} <= found.keys())


def header_currency(column: str) -> str | None:
    """The currency an amount column's header names: `Amount (EUR)`, `Betrag (€)`."""
    found = _HEADER_CURRENCY.search(column)
    if found is None:
        return None
    code = found.group(1) or found.group(2)
    return SYMBOLS.get(code, code) if code in SYMBOLS else code


def datelike(value: str) -> bool:
    """A cell that looks like a date (`01/03/2026`, `20260301`, `01 Mar 2026`)."""
    return bool(_DATE_CELL.match(value[:40]))


def numberlike(value: str) -> bool:
    """A cell that looks like an amount."""
    return bool(value.strip()) and bool(_NUMBER_CELL.fullmatch(value[:40]))


def textlike(value: str) -> bool:
    """A cell that is neither a date nor a number."""
    return bool(value.strip()) and not datelike(value) and not numberlike(value)


def looks_like_data(cells: list[str]) -> bool:
    """A row of a headerless file: a date cell, a number cell and a text cell."""
    filled = [c for c in cells if c.strip()]
    return (
        any(datelike(c) for c in filled[:3])
        and any(numberlike(c) for c in filled)
        and any(textlike(c) for c in filled)
    )


def suggest(columns: list[str], body: list[list[str]], known: dict[str, str]) -> dict[str, str]:
    """The recognised roles plus a guess by content for date, amount and payee."""
    suggestion = dict(known)
    taken = set(known.values())
    for role, test in (("date", datelike), ("amount", numberlike), ("payee", textlike)):
        if role in suggestion or (role == "amount" and "debit" in suggestion):
            continue
        for at, column in enumerate(columns):
            values = [r[at] for r in body if at < len(r) and r[at].strip()]
            if column not in taken and values and all(test(v) for v in values):
                suggestion[role] = column
                taken.add(column)
                break
    return suggestion
