"""A file read in a reader process: the same statements as in this one, the reader's errors as
they were raised, and each limit (CPU, memory, wall clock), a crash and a client gone as a
422 (or the read stopped) while this process goes on.

The readers in tests/statements/readers.py stand in for a reader gone wrong; the child process
imports their module by name to find them."""

from __future__ import annotations

from pathlib import Path

import pytest

from domain.errors import APIError, Unprocessable, UnsupportedMediaType
from statements.isolated import ReadLimits, read_isolated
from statements.parsed import ParsedFile
from statements.read import ReadOptions, SavedMappings, read_statement
from tests.imports.conftest import SAMPLES
from tests.statements import readers, slow_start
from tests.statements.readers import burn, crash, doze, fail, hoard

SMALL = ReadLimits(cpu_seconds=1, memory_bytes=256 * 1024 * 1024, wall_seconds=30.0)


def write(tmp_path: Path, data: bytes, name: str = "file") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def rows_of(parsed: ParsedFile) -> list[list[tuple[object, ...]]]:
    return [
        [
            (r.position, r.posted_on, r.amount_minor, r.merchant, r.bank_id, r.reason)
            for r in st.each()
        ]
        for st in parsed.statements
    ]


@pytest.mark.parametrize("name", ["multi_account.ofx", "german.csv", "statement.camt.xml"])
def test_a_file_reads_the_same_in_a_reader_process(tmp_path: Path, name: str) -> None:
    data = (SAMPLES / name).read_bytes()
    options = ReadOptions(currency="EUR", locale="de_DE" if name.endswith("csv") else None)
    here = read_statement(data, name, options)
    there = read_isolated(write(tmp_path, data), name, options, ReadLimits())
    assert there.format == here.format and there.mapping == here.mapping
    assert [s.span() for s in there.statements] == [s.span() for s in here.statements]
    assert [(s.bank_ref, s.closing_minor) for s in there.statements] == [
        (s.bank_ref, s.closing_minor) for s in here.statements
    ]
    assert rows_of(there) == rows_of(here) and rows_of(there)[0]


def test_every_option_goes_to_the_reader_process(tmp_path: Path) -> None:
    data = b"When;Who;How much\n01.03.2026;Kiosk;-1,50\n"
    mapping = {"date": "When", "payee": "Who", "amount": "How much"}
    saved = SavedMappings({("When", "Who", "How much"): mapping})
    options = ReadOptions(format="csv", currency="CHF", locale="de_DE", saved=saved)
    parsed = read_isolated(write(tmp_path, data), "odd.txt", options, ReadLimits())
    assert parsed.format == "csv" and parsed.statements[0].currency == "CHF"
    assert rows_of(parsed)[0][0][2] == -150
    assert (parsed.columns, parsed.mapping) == (["When", "Who", "How much"], mapping)
    sent = ReadOptions(currency="CHF", locale="de_DE", mapping=mapping)
    again = read_isolated(write(tmp_path, data, "again.csv"), "again.csv", sent, ReadLimits())
    assert rows_of(again) == rows_of(parsed) and again.mapping == mapping


def test_the_readers_errors_come_back_as_raised(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedMediaType) as binary:
        read_isolated(write(tmp_path, b"\x00\x01\x02" * 100), "x.bin", ReadOptions(), SMALL)
    assert binary.value.code == "unknown_format"
    cut = (SAMPLES / "multi_account.ofx").read_bytes()[:900]
    with pytest.raises(Unprocessable) as refused:
        read_isolated(write(tmp_path, cut), "cut.ofx", ReadOptions(), SMALL)
    assert (refused.value.code, refused.value.details) == (
        "unparsable_file",
        {"element": "LEDGERBAL"},
    )


@pytest.mark.parametrize(
    "reader, limit, limits",
    [
        (burn, "cpu", SMALL),
        # Only the memory limit can stop it: a loaded machine once took a second of CPU to
        # page in what it allocated, and the read was named "cpu".
        (hoard, "memory", ReadLimits(cpu_seconds=30, memory_bytes=SMALL.memory_bytes)),
    ],
    ids=["cpu", "memory"],
)
def test_a_reader_past_its_limit_is_stopped_and_named(  # type: ignore[no-untyped-def]
    tmp_path: Path, reader, limit: str, limits: ReadLimits
) -> None:
    with pytest.raises(Unprocessable) as stopped:
        read_isolated(write(tmp_path, b"x"), "x.csv", ReadOptions(), limits, read=reader)
    assert (stopped.value.code, stopped.value.details) == ("reader_limit", {"limit": limit})


def test_a_reader_past_the_wall_clock_is_killed(tmp_path: Path) -> None:
    limits = ReadLimits(wall_seconds=0.5)
    with pytest.raises(Unprocessable) as stopped:
        read_isolated(write(tmp_path, b"x"), "x.csv", ReadOptions(), limits, read=doze)
    assert (stopped.value.code, stopped.value.details) == ("reader_limit", {"limit": "time"})
    assert "0.5 seconds" in stopped.value.message


def test_a_reader_that_crashes_is_a_422_and_this_process_goes_on(tmp_path: Path) -> None:
    for reader in (crash, fail):
        with pytest.raises(Unprocessable) as crashed:
            read_isolated(write(tmp_path, b"secret"), "x.csv", ReadOptions(), SMALL, read=reader)
        assert crashed.value.code == "reader_crashed"
        assert "secret" not in crashed.value.message


def test_the_cpu_limit_counts_from_the_read_not_from_the_import_of_its_reader(
    tmp_path: Path,
) -> None:
    # The child spends STARTUP_CPU seconds (more than SMALL's one) importing the reader's
    # module before it reads: that is not the read's CPU, and the reader's own error comes back.
    assert SMALL.cpu_seconds < readers.STARTUP_CPU
    with pytest.raises(Unprocessable) as crashed:
        read_isolated(write(tmp_path, b"x"), "x.csv", ReadOptions(), SMALL, read=slow_start.fail)
    assert crashed.value.code == "reader_crashed"


def test_a_read_whose_client_left_is_stopped(tmp_path: Path) -> None:
    with pytest.raises(APIError) as stopped:
        read_isolated(
            write(tmp_path, b"x"), "x.csv", ReadOptions(), SMALL, gone=lambda: True, read=doze
        )
    assert stopped.value.code == "client_gone"


def test_a_failed_read_logs_one_line_without_the_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(Unprocessable):
        read_isolated(write(tmp_path, b"IBAN DE00SECRET"), "x.csv", ReadOptions(), SMALL, read=fail)
    assert "DE00SECRET" not in capfd.readouterr().err
    where = f"{readers.__file__}:{fail.__code__.co_firstlineno + 2}"
    assert [r.getMessage() for r in caplog.records] == [
        f"a statement reader failed: ValueError at {where}"
    ]
