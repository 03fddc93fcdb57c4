"""Statement import at scale: a generated CSV of N rows becomes a draft, then is committed.

Run: python -m bench.imports [rows ...] (default 10000 100000). Prints, per size, rows per
second of the draft (parse, duplicate lookup, rows stored), of the commit and of importing
the same file again (every row a duplicate), with the process's peak resident memory after
each (it only grows: run one size per process to read a size's own peak), on a fresh SQLite
database in a temporary folder.
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import TypeVar

from models import User
from models.db import Database
from models.migrate import upgrade
from services.imports import commits
from services.imports.drafts import Upload, create_draft

T = TypeVar("T")
MERCHANTS = ("Corner Grocer", "City Transit", "Blue Cafe", "Book Nook", "Power & Light")


def statement(rows: int) -> bytes:
    """A German-style CSV (semicolons, `1.234,56`, dd.mm.yyyy) of `rows` movements."""
    start = date(2020, 1, 1)
    lines = ["Buchungstag;Auftraggeber/Empfänger;Verwendungszweck;Betrag"]
    for i in range(rows):
        day = start + timedelta(days=i // 40)
        cents = -((i * 7919) % 250_000) - 1
        amount = f"{cents / 100:,.2f}".replace(",", "X").replace(".", ",").replace("X", ".")
        lines.append(f"{day:%d.%m.%Y};{MERCHANTS[i % 5]};Ref {i};{amount}")
    return ("\n".join(lines) + "\n").encode()


def measured(work: Callable[[], T]) -> tuple[T, float, float]:
    """Run `work`; return its result, seconds taken and the process's peak RSS in MiB."""
    began = time.perf_counter()
    result = work()
    took = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result, took, peak


def run(rows: int) -> None:
    """Import and commit `rows` rows; print the figures."""
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'bench.db'}"
        upgrade(url)
        db = Database(url)
        with db.transaction() as s:
            user = User(name="bench")
            s.add(user)
            s.flush()
            user_id = user.id
        data = statement(rows)
        upload = Upload(data, "bench.csv", currency="EUR", account_name="Bench", locale="de_DE")
        draft, draft_s, draft_mib = measured(lambda: create_draft(db, user_id, upload))
        added, commit_s, commit_mib = measured(lambda: commits.commit(db, user_id, draft))
        assert added == rows, (added, rows)
        again = Upload(data, "bench.csv", locale="de_DE", account_id=_account(db, draft, user_id))
        _, dup_s, dup_mib = measured(lambda: create_draft(db, user_id, again))
        db.dispose()
    size = len(data) / 2**20
    print(f"{rows:>7} rows ({size:.1f} MiB):")
    for name, took, peak in (
        ("draft", draft_s, draft_mib),
        ("commit", commit_s, commit_mib),
        ("re-import, all duplicates", dup_s, dup_mib),
    ):
        print(f"  {name:<26} {took:6.2f} s  {rows / took:9.0f} rows/s  peak RSS {peak:6.1f} MiB")


def _account(db: Database, import_id: int, user_id: int) -> int:
    from services.imports.review import show

    found: int = show(db, user_id, import_id)["accounts"][0]["account_id"]
    return found


if __name__ == "__main__":
    for size in [int(a) for a in sys.argv[1:]] or [10_000, 100_000]:
        run(size)
