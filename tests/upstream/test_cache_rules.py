"""The simulated API's caching rules, and the ideal placement computed from them."""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import pytest

from tests.cachesim.ideal import ideal_billed
from tests.cachesim.rules import (
    LOOKBACK,
    MIN_TOKENS,
    Point,
    PromptCache,
    RuleError,
    Usage,
    points,
    tokens_of,
)

MARK = {"type": "ephemeral"}


class Clock:
    """A settable clock."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def block(k: int, size: int = 40, **extra: Any) -> dict[str, Any]:
    """A text block of about `size` tokens."""
    return {"type": "text", "text": f"{k:04d}" + "x" * (4 * size - 30), **extra}


def body(blocks: list[dict[str, Any]], system: Any = "sys") -> dict[str, Any]:
    return {"model": "m", "system": system, "messages": [{"role": "user", "content": blocks}]}


def marked_at(n: int, *marks: int, size: int = 40) -> dict[str, Any]:
    return body(
        [block(k, size, **({"cache_control": MARK} if k in marks else {})) for k in range(n)]
    )


def test_tokens_are_a_quarter_of_the_canonical_bytes_without_markers() -> None:
    assert tokens_of(block(0)) == tokens_of(block(0, cache_control=MARK))
    assert tokens_of({"type": "text", "text": "abcd"}) == -(
        -len(b'{"text":"abcd","type":"text"}') // 4
    )


def test_a_write_is_read_back_and_markers_are_not_part_of_the_prefix() -> None:
    cache = PromptCache(clock=Clock())
    first = cache.apply(marked_at(40, 39))
    assert first.cache_read_input_tokens == 0 and first.cache_creation_input_tokens == first.total
    second = cache.apply(marked_at(45, 39, 44))
    assert second.cache_read_input_tokens == first.total
    assert second.write_5m == second.total - first.total and second.input_tokens == 0
    assert second.billed() == pytest.approx(0.1 * first.total + 1.25 * second.write_5m)


def test_lookback_finds_an_entry_20_blocks_back_but_not_21() -> None:
    cache = PromptCache(clock=Clock())
    cache.apply(marked_at(40, 39))
    near = cache.apply(marked_at(40 + LOOKBACK, 39 + LOOKBACK))
    assert near.cache_read_input_tokens > 0
    cache = PromptCache(clock=Clock())
    cache.apply(marked_at(40, 39))
    far = cache.apply(marked_at(41 + LOOKBACK, 40 + LOOKBACK))
    assert far.cache_read_input_tokens == 0


def test_a_changed_early_block_busts_everything_after_it() -> None:
    cache = PromptCache(clock=Clock())
    cache.apply(marked_at(40, 39))
    changed = cache.apply(body(marked_at(41, 40)["messages"][0]["content"], system="sys 2"))
    assert changed.cache_read_input_tokens == 0


def test_prefixes_under_the_minimum_are_not_cached() -> None:
    cache = PromptCache(clock=Clock())
    small = marked_at(3, 2)
    assert points(small)[-1].tokens < MIN_TOKENS
    assert cache.apply(small) == Usage(input_tokens=points(small)[-1].tokens)
    assert cache.apply(small).cache_read_input_tokens == 0


def test_entries_expire_after_their_ttl_and_a_read_refreshes_them() -> None:
    clock = Clock()
    cache = PromptCache(clock=clock)
    cache.apply(marked_at(40, 39))
    clock.now = 299.0
    assert cache.apply(marked_at(40, 39)).cache_read_input_tokens > 0
    clock.now = 598.0  # 299 s after the refresh
    assert cache.apply(marked_at(40, 39)).cache_read_input_tokens > 0
    clock.now = 898.5
    assert cache.apply(marked_at(40, 39)).cache_read_input_tokens == 0
    hour = body(
        [
            *(block(k) for k in range(39)),
            block(39, cache_control={"type": "ephemeral", "ttl": "1h"}),
        ]
    )
    cache = PromptCache(clock=clock)
    assert cache.apply(hour).write_1h > 0
    clock.now += 3000
    assert cache.apply(hour).cache_read_input_tokens > 0


@pytest.mark.parametrize(
    ("blocks", "message"),
    [
        ([block(k, cache_control=MARK) for k in range(5)], "maximum of 4"),
        (
            [
                block(0, cache_control=MARK),
                block(1, cache_control={"type": "ephemeral", "ttl": "1h"}),
            ],
            "1h",
        ),
        (
            [{"type": "thinking", "thinking": "x", "signature": "s", "cache_control": MARK}],
            "thinking",
        ),
        ([{"type": "text", "text": "", "cache_control": MARK}], "empty text"),
    ],
)
def test_requests_the_api_refuses_are_refused(blocks: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(RuleError, match=message):
        PromptCache().apply(body(blocks))


def brute_force(prompts: list[list[Point]], most: int) -> float:
    """The least billed cost over every choice of up to `most` markers in every request."""
    choices = [
        [marks for n in range(most + 1) for marks in itertools.combinations(range(len(prompt)), n)]
        for prompt in prompts
    ]
    best = float("inf")
    for plan in itertools.product(*choices):
        cache = PromptCache(clock=lambda: 0.0)
        cost = 0.0
        for prompt, marks in zip(prompts, plan, strict=True):
            marked = [replace(p, ttl="5m" if i in marks else None) for i, p in enumerate(prompt)]
            cost += cache.apply_points(marked).billed()
        best = min(best, cost)
    return best


@pytest.mark.parametrize(("sizes", "most"), [((3, 4, 6), 4), ((2, 3, 5, 6), 2)])
def test_the_ideal_matches_a_brute_force_search_over_every_placement(
    sizes: tuple[int, ...], most: int
) -> None:
    blocks = [block(k, 300) for k in range(max(sizes))]
    bodies = [body(blocks[:n]) for n in sizes]
    ideal = ideal_billed(bodies)
    assert ideal == pytest.approx(brute_force([points(b) for b in bodies], most))
    assert ideal < sum(points(b)[-1].tokens for b in bodies)


def test_a_break_in_the_chain_starts_a_new_one_from_the_prefix_both_share() -> None:
    blocks = [block(k, 400) for k in range(6)]
    first, second = body(blocks[:5]), body([*blocks[:3], block(9, 400)])
    alone = ideal_billed([first])
    shared = points(second)[-2].tokens  # all but the new block: at least MIN_TOKENS
    rest = points(second)[-1].tokens - shared
    assert shared >= MIN_TOKENS
    # At best the shared prefix is read; the new block is the last: not worth writing.
    assert ideal_billed([first, second]) == pytest.approx(alone + 0.1 * shared + rest)
    # Nothing shared: the second request starts from nothing.
    other = body([block(k, 400) for k in range(20, 24)], system="other")
    assert ideal_billed([first, other]) == pytest.approx(alone + ideal_billed([other]))
