"""What reading a statement file in a reader process costs against reading it in this one.

Run: python -m bench.reader [rows ...] (default 10 100000). Prints the start of the zygote
(multiprocessing's forkserver importing `statements/`, paid once per worker process), then per
size and format the wall seconds of a read in this process and of the same read through
`statements.isolated.read_isolated` (fork, limits, the rows back through a pipe as plain data),
the same at niceness 0 (the reader runs at 10, so that web threads win on a loaded machine),
the difference (the overhead per upload) and the ratio, each the median of 5 runs.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench.statements import csv, ofx
from statements.isolated import ReadLimits, read_isolated
from statements.read import ReadOptions, read_statement

RUNS = 5
OPTIONS = ReadOptions(currency="EUR", locale="de_DE")


def _rows_here(data: bytes, name: str) -> int:
    parsed = read_statement(data, name, OPTIONS)
    return sum(1 for st in parsed.statements for _ in st.each())


def _rows_there(path: str, name: str, nice: int = ReadLimits.nice) -> int:
    parsed = read_isolated(path, name, OPTIONS, ReadLimits(nice=nice))
    return sum(1 for st in parsed.statements for _ in st.each())


def _median(work: Callable[[], int]) -> tuple[float, int]:
    took, rows = [], 0
    for _ in range(RUNS):
        began = time.perf_counter()
        rows = work()
        took.append(time.perf_counter() - began)
    return statistics.median(took), rows


def main(sizes: list[int]) -> None:
    """Print the zygote's start, then a line per size and format."""
    with tempfile.TemporaryDirectory() as folder:
        first = Path(folder) / "first.csv"
        first.write_bytes(csv(1))
        began = time.perf_counter()
        _rows_there(str(first), "first.csv")
        print(f"zygote start (first read of a worker): {time.perf_counter() - began:.3f} s")
        print(
            f"{'file':<12}{'rows':>8}{'here s':>10}{'isolated s':>12}{'(nice 0) s':>12}"
            f"{'overhead s':>12}{'ratio':>8}"
        )
        for rows in sizes:
            for name, data in (("bench.csv", csv(rows)), ("bench.ofx", ofx(rows, xml=False))):
                path = Path(folder) / name
                path.write_bytes(data)
                here, counted = _median(partial(_rows_here, data, name))
                there, again = _median(partial(_rows_there, str(path), name))
                unniced, _ = _median(partial(_rows_there, str(path), name, 0))
                assert counted == again == rows, (counted, again, rows)
                print(
                    f"{name:<12}{rows:>8}{here:>10.3f}{there:>12.3f}{unniced:>12.3f}"
                    f"{there - here:>12.3f}{there / here:>8.2f}"
                )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10, 100_000])
