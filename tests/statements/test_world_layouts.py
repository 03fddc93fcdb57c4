"""Layouts found in other projects' real bank files that we read wrong: each fixture here is
written for the test (made-up values) in the exact layout of such a file."""

from __future__ import annotations

from datetime import date

from statements.parsed import ParsedFile
from statements.read import ReadOptions, read_statement


def _read(data: bytes, name: str) -> ParsedFile:
    return read_statement(data, name, ReadOptions())


def _rows(parsed: ParsedFile) -> list[tuple[date | None, int | None, str]]:
    return [(r.posted_on, r.amount_minor, r.merchant) for s in parsed.statements for r in s.each()]


def test_an_ofx_file_ending_in_one_nul_byte_is_read() -> None:
    # A QuickBooks download (.qbo) whose last byte is a lone NUL: no binary file.
    data = (
        b"OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\n\r\n<OFX><CREDITCARDMSGSRSV1>"
        b"<CCSTMTTRNRS><CCSTMTRS><CURDEF>USD<CCACCTFROM><ACCTID>4111000011112222</CCACCTFROM>"
        b"<BANKTRANLIST><STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240105<TRNAMT>-12.34"
        b"<FITID>A1<NAME>CORNER SHOP</STMTTRN></BANKTRANLIST>"
        b"<LEDGERBAL><BALAMT>-12.34<DTASOF>20240106</LEDGERBAL>"
        b"</CCSTMTRS></CCSTMTTRNRS></CREDITCARDMSGSRSV1></OFX>\r\n\x00"
    )
    parsed = _read(data, "download.qbo")
    assert _rows(parsed) == [(date(2024, 1, 5), -1234, "CORNER SHOP")]
    assert parsed.statements[0].closing_minor == -1234


def test_mt940_amounts_written_with_a_decimal_point_keep_their_cents() -> None:
    # An old bank export: SWIFT's decimal comma written as a point, in :61: and the balances.
    text = (
        ":940:\n:20:940A240107\n:25:1234.567.890EUR\n:28:00000/00\n"
        ":60F:C240106EUR000000001000.00\n"
        ":61:240107C000000000250.75NMSCNONREF\n:86:Storting\n"
        ":61:240107D000000000100.25NMSC123456\n:86:Huur\n"
        ":62F:C240107EUR000000001150.50\n"
    )
    parsed = _read(text.encode(), "export.sta")
    assert [r[1] for r in _rows(parsed)] == [25075, -10025]
    statement = parsed.statements[0]
    assert (statement.opening_minor, statement.closing_minor) == (100000, 115050)
    assert parsed.not_imported == []


def test_a_value_date_column_is_no_amount_beside_withdrawals_and_deposits() -> None:
    # A bank's history: a preamble, then the header; a purpose wrapped onto its own line.
    text = (
        "Account details for:,MS SAMPLE Account 123-456789-001\n"
        'Available Balance,"1,000.00"\n'
        "\n"
        "Transaction History \n"
        "Transaction date,Value date,Description,Withdrawals (SGD),Deposits (SGD)\n"
        "05/03/2024,05/03/2024,DEBIT PURCHASE,12.50,\n"
        ",,03/03/24  12-3456 NOODLE BAR \n"
        "04/03/2024,04/03/2024,GIRO SALARY,,2000.00\n"
    )
    parsed = _read(text.encode(), "TransactionHistory.csv")
    assert _rows(parsed) == [
        (date(2024, 3, 5), -1250, "DEBIT PURCHASE"),
        (date(2024, 3, 4), 200000, "GIRO SALARY"),
    ]
    assert parsed.statements[0].currency == "SGD"


def test_label_lines_among_the_rows_are_no_movements() -> None:
    # A brokerage's checking export: a title, the header, section labels and an end mark.
    text = (
        "Transactions  for Checking account XYZ as of 03/10/2024 10:00:00 ET\n"
        '"Date","Type","Check #","Description","Withdrawal (-)","Deposit (+)","RunningBalance"\n'
        '"Pending Transactions are not reflected within this sort criterion."\n'
        '"Posted Transactions"\n'
        '"03/08/2024","ACH","","PAYROLL SAMPLE CO","","$1,500.00","$2,000.00"\n'
        '"03/07/2024","ATM","","ATM WITHDRAWAL","$40.00","","$500.00"\n'
        '"***END OF FILE***"\n'
    )
    parsed = _read(text.encode(), "Checking_Transactions.CSV")
    assert [r[1] for r in _rows(parsed)] == [150000, -4000]


def test_a_username_line_without_date_or_amount_is_no_movement() -> None:
    text = (
        "Username,ID,Datetime,Type,Status,Note,From,To,Amount (total),Beginning Balance\n"
        "someone,,,,,,,,,$0\n"
        ",11,2024-02-01T10:00:00,Payment,Complete,lunch,Me,Friend,- $12.00,\n"
        ',12,2024-02-02T11:00:00,Charge,Complete,tickets,Friend,Me,"+ $1,020.50",\n'
    )
    parsed = _read(text.encode(), "statement.csv")
    assert _rows(parsed) == [
        (date(2024, 2, 1), -1200, "lunch"),
        (date(2024, 2, 2), 102050, "tickets"),
    ]


def test_a_dutch_export_with_a_credit_debit_column() -> None:
    text = (
        "BANK EXPORT;;;;;;;;\n"
        "Rekeningnummer;Transactiedatum;Valutacode;CreditDebet;Bedrag;Tegenrekeningnummer;"
        "Tegenrekeninghouder;Valutadatum;Omschrijving;\n"
        '"NL00BANK0000000001";"02-01-2024";"EUR";"D";"45,10";"NL00BANK0000000002";'
        '"Jansen";"02-01-2024";"Boodschappen";\n'
        '"NL00BANK0000000001";"03-01-2024";"EUR";"C";"1.200,00";"NL00BANK0000000003";'
        '"Werkgever BV";"03-01-2024";"Salaris";\n'
    )
    parsed = _read(text.encode(), "transactieoverzicht.csv")
    assert _rows(parsed) == [
        (date(2024, 1, 2), -4510, "Jansen"),
        (date(2024, 1, 3), 120000, "Werkgever BV"),
    ]


def test_headers_named_as_fintechs_and_card_issuers_name_them() -> None:
    cases = {
        # A fintech's export: the date is `created`.
        "id,created,amount,currency,description,notes\n"
        "tx_1,2024-02-03 12:00:00 +0000,-7.20,GBP,Bakery,\n": (date(2024, 2, 3), -720, "Bakery"),
        # A German card statement: Buchungsbetrag, Transaktionsbeschreibung.
        '"Belegdatum";"Buchungsdatum";"Originalbetrag";"Originalwährung";"Buchungsbetrag";'
        '"Buchungswährung";"Transaktionsbeschreibung"\n'
        '"03.02.24";"05.02.24";"-9,00";"EUR";"-9,00";"EUR";"CAFE SAMPLE"\n': (
            date(2024, 2, 5),
            -900,
            "CAFE SAMPLE",
        ),
        # A Czech bank: Datum provedení, Zaúčtovaná částka, Název protiúčtu.
        "Datum provedení;Název protiúčtu;Zpráva;Zaúčtovaná částka;Měna účtu\n"
        '04.02.2024;"Jan Novák";"nájem";"-1 250,00";"CZK"\n': (
            date(2024, 2, 4),
            -125000,
            "Jan Novák",
        ),
        # A Hungarian bank: Tranzakció dátuma, Partner neve, Tranzakció összege.
        "Tranzakció dátuma,Partner neve,Tranzakció összege,Devizanem\n"
        "2024.02.05.,Pék Kft,-1250,HUF\n": (date(2024, 2, 5), -125000, "Pék Kft"),
        # A health savings account: Transaction is the purpose.
        '"Date","Transaction","Amount","Cash Balance"\n'
        '"2024-02-06","Employer Contribution","$250.00","$250.00"\n': (
            date(2024, 2, 6),
            25000,
            "Employer Contribution",
        ),
        # A Belgian card: Handelaar is the merchant, bedrag the amount.
        "kredietkaart;datum verrichting;bedrag;credit;debet;munt;Handelaar;toelichting\n"
        "1111222233334444;07/02/2024;-16,50;;-16,50;EUR;Bookshop;\n": (
            date(2024, 2, 7),
            -1650,
            "Bookshop",
        ),
    }
    for text, expected in cases.items():
        assert _rows(_read(text.encode(), "export.csv")) == [expected], text


def _empty_curdef(transaction: str) -> bytes:
    """An OFX 1.02 statement whose CURDEF and LEDGERBAL are empty elements (a bank's export)."""
    return (
        "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS>"
        "<CURDEF></CURDEF><BANKACCTFROM><BANKID>SAMP</BANKID><ACCTID>87654321</ACCTID>"
        "<ACCTTYPE></ACCTTYPE></BANKACCTFROM><BANKTRANLIST><STMTTRN><TRNTYPE>Credit</TRNTYPE>"
        f"<DTPOSTED>20240301</DTPOSTED><TRNAMT>45.60</TRNAMT><FITID></FITID>{transaction}"
        "<MEMO>Transfer in</MEMO></STMTTRN></BANKTRANLIST><LEDGERBAL><BALAMT></BALAMT>"
        "<DTASOF></DTASOF></LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>"
    ).encode()


def test_an_ofx_statement_without_curdef_is_in_its_rows_currency_else_the_callers() -> None:
    named = _empty_curdef("<CURRENCY><CURRATE>1.0000</CURRATE><CURSYM>AUD</CURSYM></CURRENCY>")
    for data, currency, expected in ((named, "EUR", "AUD"), (_empty_curdef(""), "EUR", "EUR")):
        parsed = read_statement(data, "export.ofx", ReadOptions(currency=currency))
        statement = parsed.statements[0]
        rows = list(statement.each())
        assert statement.currency == expected
        assert [(r.amount_minor, r.currency, r.reason) for r in rows] == [(4560, expected, None)]
