"""Where a test run's time goes: each test's wall time and CPU, written by every pytest process.

A pytest plugin, off unless asked for, and its report:

    .venv/bin/python -m pytest -p tests.cpu_map -n 3 -m "not slow ..."   # CPU_MAP_DIR=.cpu-map
    .venv/bin/python -m tests.cpu_map .cpu-map                            # the tables

Each process (the xdist controller and every worker) appends one JSON line per test to its own
file in CPU_MAP_DIR: the test's wall seconds, the CPU seconds of this process (every thread:
the live servers the tests start run in it) and of its children reaped meanwhile (MCP servers,
reader processes, gunicorn, Chromium when its driver quits), and a line at start and at end
with the process's totals, so that what the tests did not spend (start-up, collection) shows
too. The report prints, per phase (`CPU_MAP_PHASE`), the walls and CPU of each worker and the
modules that spent the most CPU and the most time waiting (wall less CPU). The CPU of processes
the tests do not start (PostgreSQL, Redis) is not counted: compare with the machine's
/proc/stat over the same run.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

_out: list[IO[str]] = []


def _cpu() -> tuple[float, float]:
    """CPU seconds of this process and of its reaped children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def _write(line: dict[str, Any]) -> None:
    _out[-1].write(json.dumps(line) + "\n")
    _out[-1].flush()


def pytest_configure(config: pytest.Config) -> None:
    folder = Path(os.environ.get("CPU_MAP_DIR", ".cpu-map"))
    folder.mkdir(parents=True, exist_ok=True)
    phase = os.environ.get("CPU_MAP_PHASE", "run")
    worker = os.environ.get("PYTEST_XDIST_WORKER", "controller")
    _out.append(open(folder / f"{phase}.{worker}.{os.getpid()}.jsonl", "a"))  # noqa: SIM115
    own, kids = _cpu()
    _write({"process": "start", "cpu": own, "children": kids, "at": time.time()})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    own, kids = _cpu()
    started = time.monotonic()
    yield
    own_after, kids_after = _cpu()
    _write(
        {
            "test": item.nodeid,
            "wall": time.monotonic() - started,
            "cpu": own_after - own,
            "children": kids_after - kids,
        }
    )


def pytest_unconfigure(config: pytest.Config) -> None:
    if _out:
        own, kids = _cpu()
        _write({"process": "end", "cpu": own, "children": kids, "at": time.time()})
        _out.pop().close()


def report(folder: Path, top: int = 15) -> str:
    """The tables of a CPU map's folder, phase by phase."""
    lines: list[str] = []
    for phase in sorted({p.name.split(".")[0] for p in folder.glob("*.jsonl")}):
        workers: list[tuple[str, float, float, float, float]] = []
        modules: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
        for path in sorted(folder.glob(f"{phase}.*.jsonl")):
            ends: dict[str, dict[str, Any]] = {}
            tests = 0.0
            for row in map(json.loads, path.read_text().splitlines()):
                if "process" in row:
                    ends[row["process"]] = row
                    continue
                tests += row["cpu"]
                spent = modules[row["test"].split("::")[0]]
                spent[0] += row["wall"]
                spent[1] += row["cpu"]
                spent[2] += row["children"]
                spent[3] += 1
            if "start" in ends and "end" in ends:
                name = path.name.split(".")[1]
                wall = ends["end"]["at"] - ends["start"]["at"]
                workers.append((name, wall, ends["end"]["cpu"], tests, ends["end"]["children"]))
        lines += [f"## {phase}", "", "| process | wall s | CPU s | in tests | children |"]
        lines.append("| --- | --- | --- | --- | --- |")
        lines += [
            f"| {w[0]} | {w[1]:.0f} | {w[2]:.0f} | {w[3]:.0f} | {w[4]:.0f} |" for w in workers
        ]
        for title, key in (
            ("most CPU", lambda m: -(m[1][1] + m[1][2])),
            ("most waiting (wall less CPU)", lambda m: -(m[1][0] - m[1][1] - m[1][2])),
        ):
            lines += ["", f"{title}:", "", "| module | tests | wall s | CPU s | children |"]
            lines.append("| --- | --- | --- | --- | --- |")
            for name, (wall, cpu, kids, count) in sorted(modules.items(), key=key)[:top]:
                lines.append(f"| {name} | {count:.0f} | {wall:.1f} | {cpu:.1f} | {kids:.1f} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(Path(sys.argv[1] if len(sys.argv) > 1 else ".cpu-map")))
