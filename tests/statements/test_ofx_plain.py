"""The OFX reader's plain-row path (a STMTTRN of leaves only, read whole by one pattern) gives
what the tag loop gives for every STMTTRN, plain or not: rows, reasons and their lines,
statements, errors; in both readings (streamed in two passes, and in one pass to a sink)."""

from __future__ import annotations

from dataclasses import replace

import pytest

import statements.ofx as ofx
from bench.statements import MAKERS
from domain.errors import APIError
from statements.ofx import _plain_row, read_ofx
from statements.parsed import ParsedRow, ParsedStatement
from tests.statements.test_ofx import SGML_HEADER, sgml, trn

XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?><?OFX OFXHEADER="200" VERSION="220"?>\n'


def xml(transactions: str, kind: str = "STMTRS", list_: str = "BANKTRANLIST") -> bytes:
    """An OFX 2.2 statement (every element closed) around `transactions`."""
    return (
        f"{XML_HEAD}<OFX><BANKMSGSRSV1><STMTTRNRS><{kind}><CURDEF>EUR</CURDEF>"
        "<BANKACCTFROM><ACCTID>998877</ACCTID></BANKACCTFROM>"
        f"<{list_}>\n{transactions}\n</{list_}><LEDGERBAL><BALAMT>1.00</BALAMT></LEDGERBAL>"
        f"</{kind}></STMTTRNRS></BANKMSGSRSV1></OFX>\n"
    ).encode()


def leaves(*pairs: tuple[str, str]) -> str:
    return "".join(f"<{name}>{value}</{name}>" for name, value in pairs)


PLAIN = leaves(("TRNTYPE", "DEBIT"), ("DTPOSTED", "20261001"), ("TRNAMT", "-1.50"))
FILES = {
    "sgml": sgml(trn("-1.00") + trn("2.00", "F2", "A &amp; B") + trn("-3", None)),
    "xml": xml(f"<STMTTRN>{PLAIN}<FITID>X1</FITID></STMTTRN>\n" * 3),
    "entities and spaces": xml(
        f"<STMTTRN>\n  {PLAIN}\n  <NAME>  Caf&#233; &lt;1&gt; </NAME>\n  <MEMO></MEMO>\n</STMTTRN>"
    ),
    "a leaf twice: the first wins": xml(
        f"<STMTTRN>{PLAIN}<NAME>First</NAME><NAME>Second</NAME><TRNAMT>9.99</TRNAMT></STMTTRN>"
    ),
    "an aggregate inside": xml(
        f"<STMTTRN>{PLAIN}<PAYEE><NAME>Payee</NAME></PAYEE><NAME>Own</NAME></STMTTRN>"
        f"<STMTTRN>{PLAIN}<CURRENCY><CURRATE>1.10</CURRATE><CURSYM>USD</CURSYM></CURRENCY>"
        f"</STMTTRN><STMTTRN>{PLAIN}</STMTTRN>"
    ),
    "an aggregate left open inside": sgml(
        "<STMTTRN><DTPOSTED>20261001<TRNAMT>-1.00<PAYEE><NAME>Payee<MEMO>m</STMTTRN>"
        "<STMTTRN><DTPOSTED>20261001<TRNAMT>-2.00<CURRENCY><CURRATE>1.1<CURSYM>EUR</STMTTRN>"
        + trn("-3.00")
    ),
    "a statement inside an open STMTTRN": (
        SGML_HEADER + "<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD<BANKTRANLIST>"
        "<STMTTRN><TRNAMT>1<STMTRS><CURDEF>USD</STMTRS></STMTTRN></BANKTRANLIST></STMTRS>"
        "</STMTTRNRS></BANKMSGSRSV1><CREDITCARDMSGSRSV1><CCSTMTTRNRS><CCSTMTRS><CURDEF>USD"
        "<CCACCTFROM><ACCTID>4111</CCACCTFROM><BANKTRANLIST>" + trn("-1.00") + "</BANKTRANLIST>"
        "<LEDGERBAL><BALAMT>-1.00</LEDGERBAL></CCSTMTRS></CCSTMTTRNRS></CREDITCARDMSGSRSV1></OFX>"
    ).encode(),
    "end tag twice": xml(f"<STMTTRN>{PLAIN}</STMTTRN></STMTTRN><STMTTRN>{PLAIN}</STMTTRN>"),
    "empty and text only": xml("<STMTTRN></STMTTRN><STMTTRN> text </STMTTRN>"),
    "comment and cdata": xml(
        f"<STMTTRN>{PLAIN}<!-- x --></STMTTRN><STMTTRN>{PLAIN}<NAME><![CDATA[a<b]]></NAME>"
        "</STMTTRN>"
    ),
    "lower case and attributes": xml(
        f"<stmttrn>{PLAIN}</stmttrn><STMTTRN>{PLAIN}<name>x</name></STMTTRN>"
        f'<STMTTRN a="1">{PLAIN}</STMTTRN><STMTTRN>{PLAIN}<NAME b="2">y</NAME></STMTTRN>'
    ),
    "another end tag inside": xml(f"<STMTTRN>{PLAIN}<NAME>x</MEMO></STMTTRN>"),
    "a stray angle bracket": xml(f"<STMTTRN>{PLAIN}<NAME>a < b</NAME></STMTTRN>"),
    "left open": sgml("".join(trn(a, f"F{a}").replace("</STMTTRN>", "") for a in "123")),
    "open, then plain": sgml(trn("-1.00").replace("</STMTTRN>", "") + trn("-2.00", "F2") * 3),
    "unreadable rows name their lines": sgml(
        "\n".join(
            (
                trn("-1.00"),
                trn("1E+9999", "F2"),
                trn("-1.00", "F3", day="20260231"),
                trn("-1.00", "F4", day="0000010"),
                trn("", "F5"),
                "<STMTTRN><TRNAMT>1</STMTTRN>",
            )
        )
    ),
    "investment cash": xml(
        f"<INVBANKTRAN><STMTTRN>{PLAIN}</STMTTRN><SUBACCTFUND>CASH</SUBACCTFUND></INVBANKTRAN>"
        f"<STMTTRN>{PLAIN}</STMTTRN><BUYSTOCK><STMTTRN>{PLAIN}</STMTTRN></BUYSTOCK>",
        kind="INVSTMTRS",
        list_="INVTRANLIST",
    ),
    "cut short": xml(f"<STMTTRN>{PLAIN}</STMTTRN>" * 3)[:-60],
    "generated sgml": MAKERS["ofx-sgml"][1](50),
    "generated xml": MAKERS["ofx-xml"][1](50),
}


class Listed:
    """A sink that keeps what it is given."""

    def __init__(self) -> None:
        self.given: list[object] = []

    def row(self, row: ParsedRow) -> None:
        self.given.append(row)

    def end(self, statement: ParsedStatement, repeated: frozenset[str]) -> None:
        self.given.append((_kept(statement), sorted(repeated)))


def _kept(statement: ParsedStatement) -> ParsedStatement:
    """What a statement says, without its stream (a function, different on each read)."""
    return replace(statement, stream=None)


def _read(data: bytes) -> object:
    """Both readings of `data` as plain data, or the error each raised."""
    seen: list[object] = []
    for sink in (None, Listed()):
        try:
            parsed = read_ofx(data, "EUR", sink)
        except APIError as err:
            seen.append((err.code, err.message, err.details))
            continue
        streamed = [(_kept(st), st.span(), list(st.each())) for st in parsed.statements]
        seen.append((parsed.not_imported, streamed, sink.given if sink else None))
    return repr(seen)


@pytest.mark.parametrize("name", FILES)
def test_the_plain_path_reads_as_the_tag_loop(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    data = FILES[name]
    fast = _read(data)
    monkeypatch.setattr(ofx, "_plain_row", lambda text, at: None)
    assert fast == _read(data)


def test_the_plain_path_takes_plain_rows_and_only_them() -> None:
    text = FILES["an aggregate inside"].decode()
    starts = [i for i in range(len(text)) if text.startswith("<STMTTRN>", i)]
    assert [_plain_row(text, at) is not None for at in starts] == [False, False, True]
    found = _plain_row(text, starts[2])
    assert found is not None and found[0] == {
        "TRNTYPE": "DEBIT", "DTPOSTED": "20261001", "TRNAMT": "-1.50"
    }  # fmt: skip
    assert text.startswith("</BANKTRANLIST>", found[1])
    twice = FILES["a leaf twice: the first wins"].decode()
    fields, _end = _plain_row(twice, twice.index("<STMTTRN>")) or ({}, 0)
    assert (fields["NAME"], fields["TRNAMT"]) == ("First", "-1.50")


def test_reasons_name_the_line_of_their_stmttrn() -> None:
    data = FILES["unreadable rows name their lines"]
    reasons = [r.reason for r in read_ofx(data).statements[0].each()]
    line = data.decode("cp1252").count("\n", 0, data.decode("cp1252").index("<STMTTRN>")) + 1
    assert reasons[0] is None
    assert reasons[1] is not None and reasons[1].startswith(f"STMTTRN 2 (line {line + 1}): TRNAMT")
    assert reasons[2] == (
        f'STMTTRN 3 (line {line + 2}): DTPOSTED "20260231120000[-5:EST]" is not a date '
        "(day is out of range for month)"
    )
    assert reasons[4] == f"STMTTRN 5 (line {line + 4}): it has no TRNAMT"
    assert reasons[5] == f"STMTTRN 6 (line {line + 5}): it has no DTPOSTED"
