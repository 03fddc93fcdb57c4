"""The one backoff schedule: doubling from the base up to the cap, jittered into its upper half."""

from __future__ import annotations

import random

from domain.backoff import Backoff, backoff_delay


def test_delays_double_up_to_the_cap_within_their_upper_half() -> None:
    backoff = Backoff(0.1, 0.8, random.Random(7))
    delays = [backoff.next() for _ in range(6)]
    for delay, whole in zip(delays, [0.1, 0.2, 0.4, 0.8, 0.8, 0.8], strict=True):
        assert whole / 2 <= delay <= whole


def test_a_reset_starts_again_from_the_base() -> None:
    backoff = Backoff(1.0, 60.0, random.Random(1))
    for _ in range(5):
        backoff.next()
    backoff.reset()
    assert 0.5 <= backoff.next() <= 1.0


def test_the_delay_of_an_attempt_is_the_same_schedule() -> None:
    rng_a, rng_b = random.Random(3), random.Random(3)
    backoff = Backoff(0.25, 2.0, rng_a)
    assert [backoff.next() for _ in range(5)] == [
        backoff_delay(0.25, 2.0, attempt, rng_b) for attempt in range(5)
    ]
