"""The least input a request sequence can be billed under the caching rules: an ideal placement.

Dynamic programming over the requests, knowing all of them in advance. It needs a chain:
each request extends the previous one (as a conversation's model calls do), so every entry
written is a prefix of every later request and the longest one written is all that matters.
A placement then needs two of its four breakpoints: one on that entry (an exact hit, so the
lookback limit does not apply) and one where it writes up to (any boundary of at least
MIN_TOKENS). Entries are assumed to outlive the run (a benchmark lasts seconds).
"""

from __future__ import annotations

import bisect
from typing import Any

from tests.cachesim.rules import MIN_TOKENS, READ_PRICE, WRITE_PRICE, points, strip

WRITE = WRITE_PRICE["5m"]


def ideal_billed(bodies: list[dict[str, Any]]) -> float:
    """Return the least billed input tokens over `bodies` (markers in them are ignored)."""
    states: dict[str | None, float] = {None: 0.0}  # longest written prefix -> least cost so far
    last: str | None = None
    for body in bodies:
        prompt = points(strip(body))
        if not prompt:
            continue
        if last is not None and last not in {point.key for point in prompt}:
            raise ValueError("the ideal needs each request to extend the previous one")
        last = prompt[-1].key
        tokens_at = {point.key: point.tokens for point in prompt}
        total = prompt[-1].tokens
        after: dict[str | None, float] = {}
        # Writing from a read r up to t costs cost + READ r + WRITE (t - r) + (total - t):
        # the part that depends on the state is cost - (WRITE - READ) r, for any t > r.
        offers: list[tuple[int, float]] = []
        for key, cost in states.items():
            read = tokens_at.get(key, 0) if key is not None else 0
            stay = cost + READ_PRICE * read + (total - read)
            after[key] = min(after.get(key, stay), stay)
            offers.append((read, cost - (WRITE - READ_PRICE) * read))
        offers.sort()
        reads = [read for read, _ in offers]
        best: list[float] = []
        for _, value in offers:
            best.append(min(best[-1], value) if best else value)
        for point in prompt:
            if point.tokens < MIN_TOKENS:
                continue
            usable = bisect.bisect_left(reads, point.tokens)  # offers with read < tokens
            if usable == 0:
                continue
            cost = best[usable - 1] + (WRITE - 1) * point.tokens + total
            after[point.key] = min(after.get(point.key, cost), cost)
        states = after
    return min(states.values())
