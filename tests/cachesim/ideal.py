"""The least input a request sequence can be billed under the caching rules: an ideal placement.

Dynamic programming over the requests, knowing all of them in advance. Within a chain,
each request extends the previous one (as a conversation's model calls do), so every entry
written is a prefix of every later request and the longest one written is all that matters.
Where a request does not extend the one before (a trim step, a compaction, cleared tool
results), a new chain starts from the longest prefix the two share, as if it were cached.
A placement then needs two of its four breakpoints: one on that entry (an exact hit, so the
lookback limit does not apply) and one where it writes up to (any boundary of at least
MIN_TOKENS). Entries are assumed to outlive the run (a benchmark lasts seconds).
"""

from __future__ import annotations

import bisect
from typing import Any

from tests.cachesim.rules import MIN_TOKENS, READ_PRICE, WRITE_PRICE, Point, points, strip

WRITE = WRITE_PRICE["5m"]


def ideal_billed(bodies: list[dict[str, Any]]) -> float:
    """Return the least billed input tokens over `bodies` (markers in them are ignored)."""
    states: dict[str | None, float] = {None: 0.0}  # longest written prefix -> least cost so far
    last: str | None = None
    previous: list[Point] = []
    for body in bodies:
        prompt = points(strip(body))
        if not prompt:
            continue
        if last is not None and last not in {point.key for point in prompt}:
            # A break in the chain (a compaction, a cleared tool result, a trim step): what
            # can still be read is the longest prefix shared with the previous request.
            # Assume the ideal had an entry right there, so the bound stays a lower one.
            states = {_shared(previous, prompt): min(states.values())}
        last, previous = prompt[-1].key, prompt
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


def _shared(before: list[Point], prompt: list[Point]) -> str | None:
    """The key of the longest prefix `prompt` shares with `before` that could be an entry."""
    shared = None
    for old, new in zip(before, prompt, strict=False):
        if old.key != new.key:
            break
        if new.tokens >= MIN_TOKENS:
            shared = new.key
    return shared
