"""The CSV exports of the most used banks and fintechs in the US, UK and EU: how each one's
file is recognised (its header, or its shape when it has none) and read (roles, date order,
decimal mark, sign convention). docs/imports.md lists them; tests/imports/layouts holds a
file in each one's exact layout. The sources each layout was checked against are in
docs/decisions/0013-statement-formats.md."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from statements.columns import HEADERLESS, datelike, normalise, numberlike, textlike

# A role's column: its name, or names of which the first the file has is taken; a name ending
# in "(*)" stands for any currency in brackets: "Amount (*)" is "Amount (GBP)" or "Amount (EUR)".
Column = str | tuple[str, ...]
Shape = Callable[[list[list[str]], str], bool]


@dataclass(frozen=True)
class Layout:
    """One bank's export format."""

    name: str
    bank: str
    country: str
    kind: str
    header: tuple[str, ...]  # names the file's header must all have (any case and spacing)
    roles: dict[str, Column]
    date_order: str | None = None
    decimal: str | None = None
    sign: str = "as_written"
    # For a file without a header: a test of its first rows and delimiter.
    shape: Shape | None = None
    # For the docs: delimiter, encoding, date and number format, what is special.
    written: str = ""
    notes: str = ""
    extra: dict[str, str] = field(default_factory=dict)


def _cells(n: int) -> tuple[str, ...]:
    return tuple(HEADERLESS.format(i) for i in range(1, n + 1))


def _wells_fargo(rows: list[list[str]], delimiter: str) -> bool:
    return delimiter == "," and all(len(r) == 5 and r[2].strip() == "*" for r in rows)


def _abn_amro(rows: list[list[str]], delimiter: str) -> bool:
    return delimiter == "\t" and all(
        len(r) >= 8 and len(r[1]) == 3 and r[1].isalpha() and len(r[2]) == 8 and r[2].isdigit()
        for r in rows
    )


def _asn(rows: list[list[str]], delimiter: str) -> bool:
    return delimiter == "," and all(
        len(r) == 19 and datelike(r[0]) and len(r[7]) == len(r[9]) == 3 and r[7].isalpha()
        for r in rows
    )


def _three_columns(rows: list[list[str]], delimiter: str) -> bool:
    return all(len(r) == 3 and datelike(r[0]) and textlike(r[1]) and numberlike(r[2]) for r in rows)


LAYOUTS: tuple[Layout, ...] = (
    Layout(
        "Chase (checking)", "Chase", "US", "checking",
        ("Details", "Posting Date", "Description", "Amount", "Type", "Balance", "Check or Slip #"),
        {"date": "Posting Date", "amount": "Amount", "description": "Description",
         "balance": "Balance"},
        "mdy", ".", written="comma, UTF-8, MM/DD/YYYY, -12.34",
        notes="every row ends with a comma the header has not; newest first",
    ),
    Layout(
        "Chase (credit card)", "Chase", "US", "credit_card",
        ("Transaction Date", "Post Date", "Description", "Category", "Type", "Amount", "Memo"),
        {"date": "Post Date", "amount": "Amount", "description": "Description"},
        "mdy", ".", written="comma, UTF-8, MM/DD/YYYY, -12.34",
        notes="purchases negative, payments positive; an empty Memo ends each row",
    ),
    Layout(
        "Bank of America (checking)", "Bank of America", "US", "checking",
        ("Date", "Description", "Amount", "Running Bal."),
        {"date": "Date", "amount": "Amount", "description": "Description",
         "balance": "Running Bal."},
        "mdy", ".", written='comma, UTF-8, MM/DD/YYYY, "-1,234.56"',
        notes="a summary of balances above the header; a first row of the beginning balance",
    ),
    Layout(
        "Bank of America (credit card)", "Bank of America", "US", "credit_card",
        ("Posted Date", "Reference Number", "Payee", "Address", "Amount"),
        {"date": "Posted Date", "amount": "Amount", "payee": "Payee",
         "bank_id": "Reference Number"},
        "mdy", ".", written="comma, UTF-8, MM/DD/YYYY, -12.34",
        notes="charges negative",
    ),
    Layout(
        "Wells Fargo", "Wells Fargo", "US", "checking", _cells(5),
        {"date": "Column 1", "amount": "Column 2", "description": "Column 5"},
        "mdy", ".", shape=_wells_fargo, written="comma, every cell quoted, MM/DD/YYYY, -12.34",
        notes='no header: date, amount, "*", check number, description',
    ),
    Layout(
        "Capital One (credit card)", "Capital One", "US", "credit_card",
        ("Transaction Date", "Posted Date", "Card No.", "Description", "Category", "Debit",
         "Credit"),
        {"date": "Posted Date", "debit": "Debit", "credit": "Credit",
         "description": "Description", "account": "Card No."},
        "ymd", ".", written="comma, UTF-8, YYYY-MM-DD, 12.34",
        notes="charges in Debit, payments in Credit, both positive",
    ),
    Layout(
        "Citi (credit card)", "Citi", "US", "credit_card",
        ("Status", "Date", "Description", "Debit", "Credit"),
        {"date": "Date", "debit": "Debit", "credit": "Credit", "description": "Description",
         "status": "Status"},
        "mdy", ".", written="comma, UTF-8, MM/DD/YYYY, 12.34",
        notes="charges in Debit, payments in Credit (written negative); Pending rows not booked",
    ),
    Layout(
        "American Express (US)", "American Express", "US", "credit_card",
        ("Date", "Description", "Card Member", "Account #", "Amount"),
        {"date": "Date", "amount": "Amount", "description": "Description",
         "bank_id": "Reference"},
        "mdy", ".", sign="charges_positive", written="comma, UTF-8, MM/DD/YYYY, 12.34",
        notes="charges positive, payments negative; Extended Details may span lines",
    ),
    Layout(
        "American Express (UK)", "American Express", "UK", "credit_card",
        ("Date", "Description", "Card Member", "Account #", "Amount", "Postcode"),
        {"date": "Date", "amount": "Amount", "description": "Description",
         "bank_id": "Reference"},
        "dmy", ".", sign="charges_positive", written="comma, UTF-8, DD/MM/YYYY, 12.34",
        notes="charges positive, payments negative",
    ),
    Layout(
        "Discover", "Discover", "US", "credit_card",
        ("Trans. Date", "Post Date", "Description", "Amount", "Category"),
        {"date": "Post Date", "amount": "Amount", "description": "Description"},
        "mdy", ".", sign="charges_positive", written="comma, UTF-8, MM/DD/YYYY, 12.34",
        notes="charges positive, payments negative",
    ),
    Layout(
        "Barclays", "Barclays", "UK", "checking",
        ("Number", "Date", "Account", "Amount", "Subcategory", "Memo"),
        {"date": "Date", "amount": "Amount", "description": "Memo", "account": "Account"},
        "dmy", ".", written="comma, UTF-8, DD/MM/YYYY, -12.34",
        notes="Number is mostly empty; the payee is in Memo",
    ),
    Layout(
        "HSBC UK", "HSBC", "UK", "checking", _cells(3),
        {"date": "Column 1", "description": "Column 2", "amount": "Column 3"},
        "dmy", ".", shape=_three_columns, written='comma, UTF-8, DD/MM/YYYY, "-1,234.56"',
        notes="no header: date, description, amount",
    ),
    Layout(
        "Lloyds", "Lloyds", "UK", "checking",
        ("Transaction Date", "Transaction Type", "Sort Code", "Account Number",
         "Transaction Description", "Debit Amount", "Credit Amount", "Balance"),
        {"date": "Transaction Date", "debit": "Debit Amount", "credit": "Credit Amount",
         "description": "Transaction Description", "balance": "Balance",
         "account": "Account Number"},
        "dmy", ".", written="comma, UTF-8, DD/MM/YYYY, 12.34",
        notes="sort code written '30-94-57; newest first (Halifax and Bank of Scotland alike)",
    ),
    Layout(
        "Nationwide", "Nationwide", "UK", "checking",
        ("Date", "Transaction type", "Description", "Paid out", "Paid in", "Balance"),
        {"date": "Date", "debit": "Paid out", "credit": "Paid in", "description": "Description",
         "balance": "Balance"},
        "dmy", ".", written='comma, every cell quoted, Windows-1252, 01 Oct 2026, "£1,234.56"',
        notes="account name, balance and available balance above the header",
    ),
    Layout(
        "Monzo", "Monzo", "UK", "checking",
        ("Transaction ID", "Date", "Time", "Type", "Name", "Emoji", "Category", "Amount",
         "Currency", "Local amount", "Local currency"),
        {"date": "Date", "amount": "Amount", "payee": "Name", "description": "Description",
         "currency": "Currency", "local_amount": "Local amount",
         "local_currency": "Local currency", "bank_id": "Transaction ID"},
        "dmy", ".", written="comma, UTF-8, DD/MM/YYYY and a Time column, -12.34",
        notes="a card payment abroad keeps its local amount and currency",
    ),
    Layout(
        "Starling", "Starling", "UK", "checking",
        ("Date", "Counter Party", "Reference", "Type", "Amount (*)", "Balance (*)"),
        {"date": "Date", "amount": "Amount (*)", "payee": "Counter Party",
         "description": "Reference", "balance": "Balance (*)"},
        "dmy", ".", written="comma, UTF-8, DD/MM/YYYY, -12.34",
        notes="the currency is in the header: Amount (GBP)",
    ),
    Layout(
        "Revolut", "Revolut", "UK/EU", "checking",
        ("Type", "Product", "Started Date", "Completed Date", "Description", "Amount", "Fee",
         "Currency", "State", "Balance"),
        {"date": ("Completed Date", "Started Date"), "amount": "Amount", "fee": "Fee",
         "description": "Description", "currency": "Currency", "status": "State",
         "balance": "Balance"},
        "ymd", ".", written="comma, UTF-8, 2026-10-01 10:00:00, -12.34",
        notes="a fee is taken from the amount; PENDING, REVERTED, DECLINED rows not booked",
    ),
    Layout(
        "N26", "N26", "EU", "checking",
        ("Booking Date", "Value Date", "Partner Name", "Partner Iban", "Type",
         "Payment Reference", "Account Name", "Amount (EUR)", "Original Amount",
         "Original Currency", "Exchange Rate"),
        {"date": "Booking Date", "amount": "Amount (EUR)", "payee": "Partner Name",
         "description": "Payment Reference", "local_amount": "Original Amount",
         "local_currency": "Original Currency"},
        "ymd", ".", written="comma, UTF-8, YYYY-MM-DD, -12.34",
        notes="a card payment abroad keeps its original amount and currency",
    ),
    Layout(
        "N26 (before 2024)", "N26", "EU", "checking",
        ("Date", "Payee", "Account number", "Transaction type", "Payment reference",
         "Amount (EUR)", "Amount (Foreign Currency)", "Type Foreign Currency", "Exchange Rate"),
        {"date": "Date", "amount": "Amount (EUR)", "payee": "Payee",
         "description": "Payment reference", "local_amount": "Amount (Foreign Currency)",
         "local_currency": "Type Foreign Currency"},
        "ymd", ".", written="comma, UTF-8, YYYY-MM-DD, -12.34",
    ),
    Layout(
        "ING Germany", "ING", "DE", "checking",
        ("Buchung", "Auftraggeber/Empfänger", "Buchungstext", "Verwendungszweck", "Betrag"),
        {"date": "Buchung", "amount": "Betrag", "payee": "Auftraggeber/Empfänger",
         "description": "Verwendungszweck", "balance": "Saldo",
         "currency": ("Währung (2)", "Währung")},
        "dmy", ",", written="semicolon, Windows-1252 (older) or UTF-8, DD.MM.YYYY, -1.234,56",
        notes="a dozen lines of account details above the header; two Währung columns",
    ),
    Layout(
        "Deutsche Bank", "Deutsche Bank", "DE", "checking",
        ("Buchungstag", "Wert", "Umsatzart", "Begünstigter / Auftraggeber", "Verwendungszweck",
         "Soll", "Haben", "Währung"),
        {"date": "Buchungstag", "amount": "Betrag", "debit": "Soll", "credit": "Haben",
         "payee": "Begünstigter / Auftraggeber", "description": "Verwendungszweck",
         "currency": "Währung"},
        "dmy", ",", written="semicolon, UTF-8 with BOM, D.M.YYYY, -1.000,00",
        notes="account and period above the header, the new balance below the rows",
    ),
    Layout(
        "Sparkasse", "Sparkasse", "DE", "checking",
        ("Auftragskonto", "Buchungstag", "Valutadatum", "Buchungstext", "Verwendungszweck",
         "Beguenstigter/Zahlungspflichtiger", "Betrag", "Waehrung", "Info"),
        {"date": "Buchungstag", "amount": "Betrag", "payee": "Beguenstigter/Zahlungspflichtiger",
         "description": "Verwendungszweck", "currency": "Waehrung", "status": "Info",
         "account": "Auftragskonto"},
        "dmy", ",", written="semicolon, every cell quoted, Windows-1252, DD.MM.YY, -53,94",
        notes="CSV-CAMT and CSV-MT940 alike; Umsatz vorgemerkt rows not booked",
    ),
    Layout(
        "DKB", "DKB", "DE", "checking",
        ("Buchungsdatum", "Wertstellung", "Status", "Zahlungspflichtige*r",
         "Zahlungsempfänger*in", "Verwendungszweck", "Umsatztyp", "Betrag (€)"),
        {"date": "Buchungsdatum", "amount": "Betrag (€)", "payer": "Zahlungspflichtige*r",
         "payee": "Zahlungsempfänger*in", "description": "Verwendungszweck",
         "status": "Status"},
        "dmy", ",", written="semicolon, every cell quoted, UTF-8 with BOM, DD.MM.YY, -12,34",
        notes="account and balance above the header; payer and payee in two columns",
    ),
    Layout(
        "Commerzbank", "Commerzbank", "DE", "checking",
        ("Buchungstag", "Wertstellung", "Umsatzart", "Buchungstext", "Betrag", "Währung",
         "IBAN Kontoinhaber"),
        {"date": "Buchungstag", "amount": "Betrag", "description": "Buchungstext",
         "currency": "Währung", "account": "IBAN Kontoinhaber"},
        "dmy", ",", written="semicolon, UTF-8 with BOM, DD.MM.YYYY, -12,34",
        notes="the payee is inside Buchungstext",
    ),
    Layout(
        "BNP Paribas Fortis", "BNP Paribas Fortis", "BE", "checking",
        ("Nº de séquence", "Date d'exécution", "Date valeur", "Montant", "Devise du compte",
         "Numéro de compte", "Contrepartie", "Nom de la contrepartie", "Communication",
         "Détails", "Statut"),
        {"date": "Date d'exécution", "amount": "Montant", "currency": "Devise du compte",
         "payee": "Nom de la contrepartie", "description": ("Communication", "Détails"),
         "status": "Statut", "account": "Numéro de compte", "bank_id": "Nº de séquence"},
        "dmy", ",", written="semicolon, UTF-8, DD/MM/YYYY, -2.720,12",
        notes="refused transactions (Statut) not booked",
    ),
    Layout(
        "Rabobank", "Rabobank", "NL", "checking",
        ("IBAN/BBAN", "Munt", "BIC", "Volgnr", "Datum", "Rentedatum", "Bedrag", "Saldo na trn",
         "Naam tegenpartij", "Omschrijving-1"),
        {"date": "Datum", "amount": "Bedrag", "currency": "Munt", "payee": "Naam tegenpartij",
         "description": "Omschrijving-1", "balance": "Saldo na trn", "bank_id": "Volgnr",
         "account": "IBAN/BBAN", "local_amount": "Oorspr bedrag",
         "local_currency": "Oorspr munt"},
        "ymd", ",", written="comma, every cell quoted, UTF-8, YYYY-MM-DD, +2500,00",
    ),
    Layout(
        "ABN AMRO", "ABN AMRO", "NL", "checking", _cells(8),
        {"account": "Column 1", "currency": "Column 2", "date": "Column 3",
         "amount": "Column 7", "description": "Column 8", "balance": "Column 5"},
        "ymd", ",", shape=_abn_amro, written="tab, no header, YYYYMMDD, -12,34",
        notes="no header: account, currency, date, balance before, balance after, value date, "
        "amount, description",
    ),
    Layout(
        "ASN Bank", "ASN Bank", "NL", "checking", _cells(19),
        {"date": "Column 1", "account": "Column 2", "payee": "Column 4", "currency": "Column 10",
         "amount": "Column 11", "bank_id": "Column 16", "description": "Column 18"},
        "dmy", ".", shape=_asn, written="comma, no header, DD-MM-YYYY, -12.34",
        notes="the purpose in single quotes; the balance column is the one before the row",
    ),
    Layout(
        "ING Netherlands", "ING", "NL", "checking",
        ("Datum", "Naam / Omschrijving", "Rekening", "Tegenrekening", "Code", "Af Bij",
         "Bedrag (EUR)", "Mutatiesoort", "Mededelingen"),
        {"date": "Datum", "amount": "Bedrag (EUR)", "indicator": "Af Bij",
         "payee": "Naam / Omschrijving", "description": "Mededelingen", "account": "Rekening",
         "balance": "Saldo na mutatie"},
        "ymd", ",", written="semicolon, every cell quoted, UTF-8, YYYYMMDD, 12,34",
        notes="amounts unsigned; Af (debit) or Bij (credit) says the direction",
    ),
    Layout(
        "Wise", "Wise", "UK/EU", "checking",
        ("TransferWise ID", "Date", "Amount", "Currency", "Description", "Payment Reference",
         "Running Balance"),
        {"date": "Date", "amount": "Amount", "currency": "Currency",
         "description": "Description", "payee": ("Merchant", "Payee Name"),
         "payer": "Payer Name", "balance": "Running Balance", "bank_id": "TransferWise ID"},
        "dmy", ".", written="comma, UTF-8, DD-MM-YYYY, -12.34",
        notes="one file per currency; a fee is a row of its own with the same ID",
    ),
    Layout(
        "PayPal", "PayPal", "US/EU", "checking",
        ("Date", "Time", "TimeZone", "Name", "Type", "Status", "Currency", "Gross", "Fee",
         "Net"),
        {"date": "Date", "amount": "Net", "payee": "Name", "description": "Type",
         "currency": "Currency", "status": ("Balance Impact", "Status"),
         "bank_id": "Transaction ID", "balance": "Balance"},
        None, None, written='comma, every cell quoted, UTF-8, MM/DD/YYYY or DD/MM/YYYY, '
        '"1,234.56" or "1.234,56"',
        notes="Net moves the balance; Memo (Balance Impact) and Pending rows not booked",
    ),
)  # fmt: skip


def matching(columns: list[str]) -> Layout | None:
    """The layout whose header names this file's columns all have (the most specific one)."""
    keys = {normalise(c) for c in columns}
    found: Layout | None = None
    for layout in LAYOUTS:
        if layout.shape is not None:
            continue
        if all(_has(keys, name) for name in layout.header) and (
            found is None or len(layout.header) > len(found.header)
        ):
            found = layout
    return found


def shaped(rows: list[list[str]], delimiter: str) -> Layout | None:
    """The headerless layout whose shape the file's first rows have."""
    filled = [r for r in rows if any(c.strip() for c in r)][:10]
    if not filled:
        return None
    for layout in LAYOUTS:
        if layout.shape is not None and layout.shape(filled, delimiter):
            return layout
    return None


def roles_of(layout: Layout, columns: list[str]) -> dict[str, str]:
    """The layout's roles named by this file's columns (roles whose column it lacks dropped)."""
    by_key = {normalise(c): c for c in reversed(columns)}
    found: dict[str, str] = {}
    for role, wanted in layout.roles.items():
        for name in (wanted,) if isinstance(wanted, str) else wanted:
            column = _column(by_key, columns, name)
            if column is not None:
                found[role] = column
                break
    return found


def _has(keys: set[str], name: str) -> bool:
    if name.endswith("(*)"):
        stem = normalise(name[:-3])
        return any(k.startswith(stem) and len(k) == len(stem) + 3 for k in keys)
    return normalise(name) in keys


def _column(by_key: dict[str, str], columns: list[str], name: str) -> str | None:
    if name.endswith("(*)"):
        stem = normalise(name[:-3])
        for column in columns:
            key = normalise(column)
            if key.startswith(stem) and len(key) == len(stem) + 3:
                return column
        return None
    return by_key.get(normalise(name))
