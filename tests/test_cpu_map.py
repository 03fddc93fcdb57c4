"""The CPU map (tests/cpu_map.py): each test's wall and CPU as a process spent them, and the
tables made of them."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests import cpu_map


def test_a_test_that_spins_is_mapped_with_its_cpu_and_one_that_sleeps_as_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CPU_MAP_DIR", str(tmp_path))
    monkeypatch.setenv("CPU_MAP_PHASE", "fast")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw7")

    class Item:
        def __init__(self, nodeid: str) -> None:
            self.nodeid = nodeid

    def run(nodeid: str, body: Any) -> None:
        hooks = cpu_map.pytest_runtest_protocol(Item(nodeid))  # type: ignore[arg-type]
        next(hooks)
        body()
        with pytest.raises(StopIteration):
            next(hooks)

    def spin() -> None:
        until = time.thread_time() + 0.2
        while time.thread_time() < until:
            pass

    cpu_map.pytest_configure(None)  # type: ignore[arg-type]
    run("tests/a/test_spin.py::test_it", spin)
    run("tests/b/test_sleep.py::test_it", lambda: time.sleep(0.3))
    cpu_map.pytest_unconfigure(None)  # type: ignore[arg-type]

    (written,) = tmp_path.glob("fast.gw7.*.jsonl")
    rows = [json.loads(line) for line in written.read_text().splitlines()]
    assert [r.get("process") or r["test"] for r in rows] == [
        "start",
        "tests/a/test_spin.py::test_it",
        "tests/b/test_sleep.py::test_it",
        "end",
    ]
    spun, slept = rows[1], rows[2]
    assert spun["cpu"] >= 0.2 and spun["wall"] >= 0.2
    assert slept["wall"] >= 0.3 and slept["cpu"] < 0.1
    assert rows[3]["cpu"] >= rows[0]["cpu"] + 0.2

    tables = cpu_map.report(tmp_path)
    assert tables.startswith("## fast\n") and "| gw7 |" in tables
    most_cpu, most_waiting = tables.split("most CPU:")[1].split("most waiting")
    assert most_cpu.index("tests/a/test_spin.py") < most_cpu.index("tests/b/test_sleep.py")
    assert most_waiting.index("tests/b/test_sleep.py") < most_waiting.index("tests/a/test_spin.py")
