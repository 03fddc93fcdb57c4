"""Soak: multi-round turns under random upstream faults and client reconnects.

Prints `turns, faults injected, reconnects, lost, duplicated, invalid histories`; the last
three must be 0. `make soak` runs it alone with its output shown, 200 turns; `make test` runs
100 (FAULTS_SOAK_TURNS), each fault kind half as often: every kind still served, a tenth of
the turns under one.
"""

from __future__ import annotations

import os
import random
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from sqlalchemy import select

from models import ToolRun
from streaming.messages.history import validate_history
from tests.faults.conftest import Rig
from tests.faults.test_engine_faults import upstream_answer
from tests.faults.upstream import (
    CutToolAtMaxTokens,
    ErrorAfter,
    Fault,
    Normal,
    ResetAfter,
    StallAfter,
    Status,
)
from tests.live import LiveServer, decode, events_only

# A soak: minutes of turns under random faults.
pytestmark = pytest.mark.slow

TURNS = int(os.environ.get("FAULTS_SOAK_TURNS", "100"))
PER_KIND = TURNS * 12 // 200  # each kind of fault: 12 times in 200 turns, at any length
QUESTIONS = [
    "What did I spend on groceries last month?",
    "Am I over budget anywhere?",
    "Which subscriptions am I paying for?",
    "How am I doing?",
]


def fault_schedule(rng: random.Random) -> list[Fault]:
    """Each fault kind PER_KIND times, in random order, with random positions in the stream."""
    makers = [
        lambda: Status(429, retry_after=0.01),
        lambda: Status(529),
        lambda: Status(500),
        lambda: ErrorAfter(rng.randint(1, 40)),
        lambda: ResetAfter(rng.randint(1, 40)),
        lambda: StallAfter(rng.randint(1, 30), seconds=5, pings=rng.random() < 0.5),
        CutToolAtMaxTokens,
    ]
    faults = [make() for make in makers for _ in range(PER_KIND)]
    rng.shuffle(faults)
    return faults


def follow(live: LiveServer, path: str, rng: random.Random) -> tuple[bytes, int]:
    """Read a turn's events, dropping the connection at random points; return bytes, drops."""
    stitched, last, drops = b"", 0, 0
    while True:
        limit = rng.choice([None, rng.randint(1, 30)])
        read = live.read_events(path, last_event_id=last, max_events=limit, patient=True)
        piece = events_only(read)
        stitched += piece
        if piece:
            last = decode(piece)[-1][0]
            if decode(piece)[-1][1] == "turn_end":
                return stitched, drops
        drops += 1


def test_soak_loses_and_duplicates_nothing(rig: Rig, capsys: pytest.CaptureFixture[str]) -> None:
    rng = random.Random(20261122)
    schedule = fault_schedule(rng)
    lock = threading.Lock()

    def choose(index: int, body: dict[str, Any]) -> Fault:
        with lock:
            return schedule.pop() if schedule and rng.random() < 0.45 else Normal()

    rig.upstream.set_chooser(choose)
    live = LiveServer(rig.app, rig.token)
    results: dict[int, tuple[dict[str, Any], bytes, int]] = {}

    def one(i: int) -> None:
        local = random.Random(i)
        # At 1/20 of every timing, a writer waits 0.15 s for SQLite's write lock: on a busy
        # machine a start may be refused with 503 (nothing changed), and is sent again.
        turn = live.start_turn(f"{QUESTIONS[i % len(QUESTIONS)]} (#{i})", patient=True)
        stitched, drops = follow(live, f"/api/turns/{turn['turn_id']}/events", local)
        results[i] = (turn, stitched, drops)

    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(one, range(TURNS)))
        while schedule:  # turns ended before every fault was drawn: run more turns
            one(len(results))
        lost = duplicated = invalid = reconnects = 0
        statuses: Counter[str] = Counter()
        last_body = {_turn_index(b): b for b in rig.upstream.requests}
        for i, (turn, stitched, drops) in results.items():
            reconnects += drops
            seqs = [seq for seq, _, _ in decode(stitched)]
            full = events_only(live.read_events(f"/api/turns/{turn['turn_id']}/events"))
            total = len(decode(full))
            lost += len(set(range(1, total + 1)) - set(seqs))
            duplicated += len(seqs) - len(set(seqs))
            assert stitched == full, (
                f"turn {i}: reconnected stream differs: {_first_difference(stitched, full)}"
            )
            status = decode(full)[-1][2]["status"]
            statuses[status] += 1
            conversation = rig.turns.deps.messages.conversation(turn["session_id"])
            if validate_history(conversation, expect_user_last=False):
                invalid += 1
            if status == "completed":
                assert conversation[-1]["content"] == upstream_answer(last_body[i]), i
        with rig.db.transaction() as s:
            run_ids = set(s.scalars(select(ToolRun.tool_use_id)))
            runs = len(run_ids)
        served = Counter(rig.upstream.served)
        faults = sum(n for kind, n in served.items() if kind != "Normal")
        with capsys.disabled():
            print(
                f"\nsoak: turns={len(results)} faults_injected={faults} "
                f"reconnects={reconnects} lost={lost} duplicated={duplicated} "
                f"invalid_histories={invalid} refused_503={live.unavailable} "
                f"tool_runs={runs} tool_executions="
                f"{rig.executions} statuses={dict(statuses)} faults_by_kind={dict(served)}"
            )
    finally:
        live.close()
    assert lost == duplicated == invalid == 0
    # Refused calls (cut or invalid input) have a run and no execution; none ran twice, and
    # every execution has its run.
    assert max(rig.executed.values(), default=0) == 1, "a tool ran twice for one tool_use id"
    assert set(rig.executed) <= run_ids, "a tool ran with no run stored"
    assert all(
        served[k] >= PER_KIND * 10 // 12
        for k in ("Status", "ErrorAfter", "ResetAfter", "StallAfter", "CutToolAtMaxTokens")
    )
    assert statuses["completed"] >= TURNS * 0.8
    assert len(results) >= TURNS


def _turn_index(body: dict[str, Any]) -> int:
    first = body["messages"][0]["content"]
    text = first if isinstance(first, str) else first[0]["text"]
    return int(text.rsplit("(#", 1)[1].rstrip(")"))


def _first_difference(a: bytes, b: bytes) -> tuple[bytes, bytes]:
    """The first frame where two event streams differ, from each."""
    for x, y in zip(a.split(b"\n\n"), b.split(b"\n\n"), strict=False):
        if x != y:
            return x, y
    return a[-200:], b[-200:]
