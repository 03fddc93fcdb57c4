"""The statement readers alone: a generated file of N rows in each format read whole, in one
pass with every row handed to a sink as the reader process reads it (statements/isolated.py;
the sink here only counts), then in two passes as a read in this process streams (span, then
every row), with the CPU seconds each takes and the peak of the Python memory the one-pass
read allocates beyond the file's bytes (tracemalloc, in a further run: tracing slows it).

Run: python -m bench.statements [rows] (default 100000). One format per process gives each
its own peak: python -m bench.statements 100000 ofx-sgml
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from collections.abc import Callable

from statements.parsed import ParsedRow, ParsedStatement
from statements.read import ReadOptions, read_statement

FORMATS = ("ofx-sgml", "ofx-xml", "camt", "mt940", "qif", "csv")
MERCHANTS = ("Corner Grocer", "City Transit", "Blue Cafe", "Book Nook", "Power & Light")


def _cents(i: int) -> int:
    return -((i * 7919) % 250_000) - 1


def _day(i: int) -> tuple[int, int]:
    return 1 + (i // 2800) % 12, 1 + i % 28


def ofx(rows: int, xml: bool) -> bytes:
    """A bank statement of `rows` STMTTRN, OFX 1.02 (SGML) or 2.2 (XML)."""
    leaf = (lambda t, v: f"<{t}>{v}</{t}>") if xml else (lambda t, v: f"<{t}>{v}")
    head = (
        '<?xml version="1.0" encoding="UTF-8"?><?OFX OFXHEADER="200" VERSION="220"?>\n'
        if xml
        else "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\nENCODING:USASCII\nCHARSET:1252\n\n"
    )
    parts = [head, "<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS>", leaf("CURDEF", "USD")]
    parts.append("<BANKACCTFROM>" + leaf("ACCTID", "998877") + "</BANKACCTFROM><BANKTRANLIST>")
    total = 0
    for i in range(rows):
        month, day = _day(i)
        total += _cents(i)
        parts.append(
            "\n<STMTTRN>" + leaf("TRNTYPE", "DEBIT") + leaf("DTPOSTED", f"2026{month:02d}{day:02d}")
            + leaf("TRNAMT", f"{_cents(i) / 100:.2f}") + leaf("FITID", f"F{i:09d}")
            + leaf("NAME", MERCHANTS[i % 5].replace("&", "&amp;")) + leaf("MEMO", f"Ref {i}")
            + "</STMTTRN>"
        )  # fmt: skip
    parts.append(f"</BANKTRANLIST><LEDGERBAL>{leaf('BALAMT', f'{total / 100:.2f}')}</LEDGERBAL>")
    parts.append("</STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n")
    return "".join(parts).encode()


def camt(rows: int) -> bytes:
    """A CAMT.053 statement of `rows` entries."""
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:'
        'camt.053.001.02"><BkToCstmrStmt><Stmt><Acct><Id><IBAN>DE89370400440532013000</IBAN>'
        "</Id><Ccy>EUR</Ccy></Acct>"
    ]
    for i in range(rows):
        month, day = _day(i)
        parts.append(
            f'<Ntry><Amt Ccy="EUR">{-_cents(i) / 100:.2f}</Amt><CdtDbtInd>DBIT</CdtDbtInd>'
            f"<BookgDt><Dt>2026-{month:02d}-{day:02d}</Dt></BookgDt><AcctSvcrRef>R{i}"
            f"</AcctSvcrRef><AddtlNtryInf>{MERCHANTS[i % 5].replace('&', '&amp;')}"
            "</AddtlNtryInf></Ntry>"
        )
    parts.append("</Stmt></BkToCstmrStmt></Document>\n")
    return "".join(parts).encode()


def mt940(rows: int) -> bytes:
    """An MT940 statement of `rows` entries."""
    parts = [":20:BENCH\n:25:DE89370400440532013000\n:28C:1/1\n:60F:C260101EUR0,00\n"]
    for i in range(rows):
        month, day = _day(i)
        amount = f"{-_cents(i) / 100:.2f}".replace(".", ",")
        parts.append(f":61:26{month:02d}{day:02d}D{amount}NMSCNONREF\n:86:{MERCHANTS[i % 5]}\n")
    parts.append("-\n")
    return "".join(parts).encode()


def qif(rows: int) -> bytes:
    """A QIF bank section of `rows` records."""
    parts = ["!Type:Bank\n"]
    for i in range(rows):
        month, day = _day(i)
        parts.append(f"D{month}/{day}/2026\nT{_cents(i) / 100:.2f}\nP{MERCHANTS[i % 5]}\n^\n")
    return "".join(parts).encode()


def csv(rows: int) -> bytes:
    """A German CSV (semicolons, 1.234,56) of `rows` rows."""
    lines = ["Buchungstag;Auftraggeber/Empfänger;Verwendungszweck;Betrag"]
    for i in range(rows):
        month, day = _day(i)
        amount = f"{_cents(i) / 100:.2f}".replace(".", ",")
        lines.append(f"{day:02d}.{month:02d}.2026;{MERCHANTS[i % 5]};Ref {i};{amount}")
    return ("\n".join(lines) + "\n").encode()


MAKERS: dict[str, tuple[str, Callable[[int], bytes]]] = {
    "ofx-sgml": ("bench.ofx", lambda n: ofx(n, xml=False)),
    "ofx-xml": ("bench.ofx", lambda n: ofx(n, xml=True)),
    "camt": ("bench.xml", camt),
    "mt940": ("bench.sta", mt940),
    "qif": ("bench.qif", qif),
    "csv": ("bench.csv", csv),
}


class Counted:
    """A sink that only counts the rows it is given."""

    def __init__(self) -> None:
        self.count = 0

    def row(self, row: ParsedRow) -> None:
        """Count one row."""
        self.count += 1

    def end(self, statement: ParsedStatement, repeated: frozenset[str]) -> None:
        """Nothing to do at a statement's end."""


def read_once(data: bytes, name: str) -> int:
    """Read `data` as the reader process does (one pass, each row to a sink); the rows."""
    sink = Counted()
    read_statement(data, name, ReadOptions(currency="EUR", sink=sink))
    return sink.count


def read_all(data: bytes, name: str) -> int:
    """Read `data` as a streamed read in this process does (span, then every row); the rows."""
    parsed = read_statement(data, name, ReadOptions(currency="EUR"))
    count = 0
    for statement in parsed.statements:
        statement.span()
        count += sum(1 for _ in statement.each())
    return count


def run(kind: str, rows: int) -> None:
    """Read a generated file of `rows` rows in `kind`; print the figures."""
    name, make = MAKERS[kind]
    data = make(rows)
    took = []
    for read in (read_once, read_all):
        began = time.process_time()
        count = read(data, name)
        took.append(time.process_time() - began)
        assert count == rows, (kind, count)
    tracemalloc.start()
    read_once(data, name)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    size = len(data) / 2**20
    print(
        f"{kind:<9} {rows:>7} rows ({size:5.1f} MiB): one pass {took[0]:5.2f} s CPU, "
        f"two passes {took[1]:5.2f} s CPU, {peak:6.1f} MiB peak"
    )


if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    for kind in sys.argv[2:] or FORMATS:
        run(kind, size)
