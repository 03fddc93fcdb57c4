"""A file read in one pass, as the reader process reads it (every row handed to a sink, packed
in chunks, unpacked by the caller), gives the same statements and rows as the two passes of a
read in this process: spans, bank ids given twice dropped, errors alike; and the reader
process says what CPU it took."""

from __future__ import annotations

import pickle
from dataclasses import replace
from pathlib import Path

import pytest

from bench.statements import MAKERS
from domain.errors import APIError
from domain.text import one_line
from statements.isolated import CHUNK_ROWS, Packed, ReadLimits, _flattened, _rebuilt, read_isolated
from statements.parsed import ParsedFile
from statements.read import ReadOptions, read_statement
from tests.imports.conftest import SAMPLES
from tests.statements.test_ofx import sgml, trn

SHARED = Path(__file__).resolve().parents[3] / "shared" / "statements"
OPTIONS = (ReadOptions(currency="EUR"), ReadOptions(currency="USD", locale="de_DE"))


def _files() -> list[tuple[str, bytes]]:
    found = [(p.name, p.read_bytes()) for p in sorted(SAMPLES.iterdir()) if p.suffix != ".json"]
    found += [(p.name, p.read_bytes()) for p in sorted(SHARED.rglob("*")) if p.is_file()]
    found += [(name, make(CHUNK_ROWS + 7)) for name, make in MAKERS.values()]
    repeated = trn("-1.00", None) + trn("-2.00", "SAME") + trn("-3.00", "SAME")
    found.append(("repeated.ofx", sgml(repeated + trn("-4.00", "OTHER"))))
    return found


def _seen(read: object) -> object:
    """A read's statements and rows as plain data, or the error it raised."""
    try:
        parsed = read() if callable(read) else read
    except APIError as err:
        return (type(err).__name__, err.message, err.code, err.details)
    assert isinstance(parsed, ParsedFile)
    found = [parsed.format, parsed.columns, parsed.mapping, parsed.not_imported]
    for st in parsed.statements:
        rows = [
            (r.position, r.posted_on, r.amount_minor, one_line(r.merchant), one_line(r.description))
            for r in st.each()
        ]
        rows += [(r.bank_id, r.currency, r.reason) for r in st.each()]
        found.append((st.bank_ref, st.currency, st.kind, st.opening_minor, st.closing_minor))
        found.append((st.bank_name, st.last_digits, st.name, st.span(), rows))
    return found


def _one_pass(data: bytes, name: str, options: ReadOptions) -> ParsedFile:
    packed = Packed()
    flat = _flattened(read_statement(data, name, replace(options, sink=packed)), packed)
    return _rebuilt(pickle.loads(pickle.dumps(flat)))


@pytest.mark.parametrize("options", OPTIONS, ids=["eur", "usd-de"])
def test_one_pass_reads_every_file_as_two_passes_do(options: ReadOptions) -> None:
    files = _files()
    assert len(files) > 40
    for name, data in files:
        here = _seen(lambda: read_statement(data, name, options))  # noqa: B023
        once = _seen(lambda: _one_pass(data, name, options))  # noqa: B023
        assert once == here, name


def test_a_bank_id_given_twice_is_dropped_from_both_rows_in_one_pass() -> None:
    data = sgml(trn("-1.00", None) + trn("-2.00", "SAME") + trn("-3.00", "SAME"))
    parsed = _one_pass(data, "x.ofx", ReadOptions())
    assert [r.bank_id for r in parsed.statements[0].each()] == [None, None, None]


def test_the_reader_process_says_what_cpu_it_took(tmp_path: Path) -> None:
    name, make = MAKERS["csv"]
    path = tmp_path / name
    path.write_bytes(make(20_000))
    parsed = read_isolated(str(path), name, ReadOptions(currency="EUR"), ReadLimits())
    assert sum(1 for _ in parsed.statements[0].each()) == 20_000
    assert parsed.read_cpu > 0
    assert read_statement(path.read_bytes(), name, ReadOptions(currency="EUR")).read_cpu == 0
