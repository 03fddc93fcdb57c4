"""Billed input tokens of a scripted 10-turn tool conversation, with prompt caching and without.

Run: python -m bench.caching. The real app runs the conversation against a loopback API that
applies Anthropic's caching rules (tests/cachesim/rules.py); the ideal placement is computed
on the same requests (tests/cachesim/ideal.py). Prints ratios from one run.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from tests.cachesim.drive import Conversation, converse
from tests.cachesim.ideal import ideal_billed
from tests.cachesim.rules import LOOKBACK, MIN_TOKENS, strip

TURNS = 10
GOAL_RATIO, GOAL_IDEAL = 0.3, 1.10


def run(mode: str, template: Path, work: Path) -> Conversation:
    """Run the conversation on a fresh copy of the migrated database."""
    path = work / f"{mode}.db"
    shutil.copy(template, path)
    result = converse(f"sqlite:///{path}", mode, TURNS)
    if result.rejected or set(result.statuses) != {"completed"}:
        raise SystemExit(f"PROMPT_CACHE={mode}: {result.statuses} {result.rejected}")
    return result


def main() -> None:
    """Print billed input tokens off / on / ideal and their ratios."""
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ["INSTANCE_PATH"] = str(work)
        from models.migrate import upgrade

        template = work / "template.db"
        upgrade(f"sqlite:///{template}")
        runs = {mode: run(mode, template, work) for mode in ("off", "5m", "1h")}
    off, on = runs["off"], runs["5m"]
    same = [strip(body) for body in on.bodies] == off.bodies
    ideal = ideal_billed(on.bodies)
    uncached, cached = off.billed(), on.billed()
    print(
        f"{TURNS} turns, {len(on.bodies)} model calls; simulated API: prefix tools -> system -> "
        f"messages, <= 4 breakpoints, {LOOKBACK}-block lookback, {MIN_TOKENS}-token minimum, "
        "write 1.25x (1h: 2x), read 0.1x"
    )
    print(f"same requests with and without markers: {'yes' if same else 'NO'}")
    print(
        f"billed input tokens: off {uncached:,.0f}  5m {cached:,.0f}  ideal {ideal:,.0f}  "
        f"1h {runs['1h'].billed():,.0f}"
    )
    print(f"cached / uncached: {cached / uncached:.3f}x (goal <= {GOAL_RATIO}x)")
    print(f"ideal / uncached: {ideal / uncached:.3f}x")
    print(f"cached / ideal: {cached / ideal:.3f}x (goal <= {GOAL_IDEAL:.2f}x)")
    print(f"1h TTL / uncached: {runs['1h'].billed() / uncached:.3f}x")


if __name__ == "__main__":
    main()
