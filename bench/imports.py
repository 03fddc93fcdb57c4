"""Statement import at scale: a generated file of N rows in each format drafted, committed and
undone, on SQLite and on PostgreSQL, beside Actual Budget's importer where it can run.

Run: python -m bench.imports [--rows N] [--db sqlite|postgresql|both] [--actual DIR
[--actual-rows N]] [format ...] (default 100000 rows, both databases, every format of
bench.statements). Each (format, database) runs in a process of its own pinned to one
core, so its peak resident memory is its own; the table gives per step the CPU seconds of
that process (the database server's own work, PostgreSQL's, is not counted; SQLite's is)
and the wall-clock seconds, and the peak RSS. The draft's CPU also counts the reader
process that parsed the file (statements/isolated.py: forked from the zygote, so not this
process's child; it reports its own user and system CPU seconds), shown apart as `reader`;
the zygote's start, once per worker process, is not counted. The peak is this process's.
`--actual DIR` names a folder where `npm install @actual-app/api` ran: each format Actual
reads (OFX, CAMT, QIF, CSV; it reads no MT940) is imported there too, by
bench/actual_import.mjs, in a budget of its own, with `--actual-rows` rows (its import grows
faster than linearly: 100,000 rows take it minutes; see docs/performance.md).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
ROOT = Path(__file__).resolve().parent.parent
PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
# The formats Actual's importer reads, and the name its parser tells them by.
ACTUAL_READS = {
    "ofx-sgml": "bench.ofx",
    "ofx-xml": "bench.ofx",
    "camt": "bench.xml",
    "qif": "bench.qif",
    "csv": "bench.csv",
}


def measured(work: Callable[[], T]) -> tuple[T, float, float]:
    """Run `work`; return its result, the CPU seconds and the wall-clock seconds it took."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = work()
    return result, time.process_time() - cpu, time.perf_counter() - wall


def _pg_admin(*statements: str) -> None:
    from sqlalchemy import create_engine, text

    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        for statement in statements:
            conn.execute(text(statement))
    admin.dispose()


def child(kind: str, database: str, rows: int) -> dict[str, Any]:
    """In this process: draft, commit and undo `rows` rows of `kind`; the figures."""
    from bench.statements import MAKERS
    from models import User
    from models.db import Database
    from models.migrate import upgrade
    from services.imports import commits, drafts, undo
    from services.imports.drafts import Upload, create_draft
    from statements.parsed import ParsedFile
    from statements.read import ReadOptions

    name, make = MAKERS[kind]
    data = make(rows)
    read_cpu: list[float] = []
    reading = drafts.read_untrusted

    def counted(source: bytes | Path, filename: str, options: ReadOptions) -> ParsedFile:
        parsed = reading(source, filename, options)
        read_cpu.append(parsed.read_cpu)  # the reader process's CPU seconds
        return parsed

    drafts.read_untrusted = counted
    with tempfile.TemporaryDirectory() as folder:
        if database == "sqlite":
            url = f"sqlite:///{Path(folder) / 'bench.db'}"
        else:
            db_name = f"chat_bench_imports_{os.getpid()}"
            _pg_admin(f'DROP DATABASE IF EXISTS "{db_name}"', f'CREATE DATABASE "{db_name}"')
            url = PG_ADMIN.rsplit("/", 1)[0] + f"/{db_name}"
        try:
            upgrade(url)
            db = Database(url)
            with db.transaction() as s:
                user = User(name="bench")
                s.add(user)
                s.flush()
                user_id = user.id
            upload = Upload(data, name, currency="EUR", account_name="Bench")
            draft, draft_cpu, draft_wall = measured(lambda: create_draft(db, user_id, upload))
            added, commit_cpu, commit_wall = measured(lambda: commits.commit(db, user_id, draft))
            assert added == rows, (kind, added, rows)
            done, undo_cpu, undo_wall = measured(lambda: undo.undo(db, user_id, draft))
            assert done == ("undone", rows), done
            db.dispose()
        finally:
            if database != "sqlite":
                _pg_admin(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
    return {
        "format": kind,
        "db": database,
        "rows": rows,
        "mib": len(data) / 2**20,
        "draft": (draft_cpu + sum(read_cpu), draft_wall),
        "reader": sum(read_cpu),
        "commit": (commit_cpu, commit_wall),
        "undo": (undo_cpu, undo_wall),
        "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def actual(kind: str, rows: int, folder: Path) -> dict[str, Any] | str:
    """Actual Budget's importer on the same file: its figures, or why it did not run."""
    if kind not in ACTUAL_READS:
        return "reads no such file"
    if not (folder / "node_modules" / "@actual-app" / "api").is_dir():
        return f"no @actual-app/api in {folder}"
    from bench.statements import MAKERS

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ACTUAL_READS[kind]
        path.write_bytes(MAKERS[kind][1](rows))
        script = ROOT / "bench" / "actual_import.mjs"
        env = {**os.environ, "NODE_PATH": str(folder / "node_modules")}
        run = subprocess.run(
            ["taskset", "-c", "1", "node", str(script), str(path), tmp],
            capture_output=True,
            text=True,
            env=env,
            cwd=folder,
            timeout=3600,
        )
        if run.returncode != 0:
            return f"failed: {run.stderr.strip().splitlines()[-1:] or run.returncode}"
        return dict(json.loads(run.stdout.strip().splitlines()[-1]))


def main() -> None:
    """Run every (format, database) in a child process and print the table."""
    from bench.statements import FORMATS

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--db", choices=("sqlite", "postgresql", "both"), default="both")
    parser.add_argument("--actual", type=Path, help="a folder with @actual-app/api installed")
    parser.add_argument("--actual-rows", type=int, help="rows of Actual's file (default --rows)")
    parser.add_argument("--child", nargs=2, metavar=("FORMAT", "DB"), help=argparse.SUPPRESS)
    parser.add_argument("formats", nargs="*", default=list(FORMATS))
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.rows)))
        return
    databases = ("sqlite", "postgresql") if args.db == "both" else (args.db,)
    print(
        f"{'format':<9} {'db':<10} {'rows':>7} {'MiB':>5}  {'draft s cpu/wall':>16}  "
        f"{'commit s cpu/wall':>17}  {'undo s cpu/wall':>15}  {'reader':>6}  "
        f"{'draft+commit':>12}  {'peak MiB':>8}"
    )
    for kind in args.formats:
        for database in databases:
            command = [sys.executable, "-m", "bench.imports", "--rows", str(args.rows)]
            run = subprocess.run(
                ["taskset", "-c", "0", *command, "--child", kind, database],
                capture_output=True,
                text=True,
                cwd=ROOT,
            )
            if run.returncode != 0:
                print(f"{kind:<9} {database:<10} failed: {run.stderr.strip()[-300:]}")
                continue
            r = json.loads(run.stdout.strip().splitlines()[-1])
            steps = "  ".join(
                f"{r[s][0]:7.2f}/{r[s][1]:<7.2f}" for s in ("draft", "commit", "undo")
            )
            both = r["draft"][0] + r["commit"][0]
            print(
                f"{kind:<9} {database:<10} {r['rows']:>7} {r['mib']:5.1f}  {steps}  "
                f"{r['reader']:6.2f}  {both:12.2f}  {r['peak']:8.1f}"
            )
        if args.actual:
            size = args.actual_rows or args.rows
            found = actual(kind, size, args.actual)
            if isinstance(found, str):
                print(f"{kind:<9} {'Actual':<10} {size:>7}  not run: {found}")
            else:
                print(
                    f"{kind:<9} {'Actual':<10} {size:>7}  parse {found['parse_cpu']:.2f} s "
                    f"cpu, import {found['import_cpu']:.2f} s cpu / {found['import_wall']:.2f} s "
                    f"wall, peak {found['peak_mib']:.1f} MiB"
                )


if __name__ == "__main__":
    main()
