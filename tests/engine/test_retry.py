"""Retry policy and failure classification."""

from __future__ import annotations

import random
import time
from dataclasses import replace

import anthropic
import httpx2

from config import Timings
from domain.errors import UpstreamInterrupted
from engine.upstream.retry import RetryPolicy, classify, retry_after


def test_backoff_is_jittered_exponential_and_capped() -> None:
    policy, rng = replace(RetryPolicy.of(Timings(), 4), base=0.5, cap=4.0), random.Random(1)
    for attempt, ceiling in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (6, 4.0)]:
        delays = [policy.delay(attempt, None, rng) for _ in range(200)]
        assert min(delays) >= ceiling / 2 and max(delays) <= ceiling
        assert len(set(delays)) > 100


def test_retry_after_wins_over_backoff() -> None:
    assert RetryPolicy.of(Timings(), 4).delay(3, 1.25, random.Random(0)) == 1.25


def test_retries_are_bounded_by_count_and_by_time_spent_waiting() -> None:
    policy = replace(RetryPolicy.of(Timings(), 2), budget=1.0)
    assert policy.allows(0, 0.0, 0.1) and policy.allows(1, 0.5, 0.1)
    assert not policy.allows(2, 0.0, 0.1)
    assert not policy.allows(0, 0.0, 1.5)
    assert not policy.allows(1, 0.95, 0.1)


def test_time_spent_in_attempts_does_not_count_against_the_budget() -> None:
    # The default stall timeout equals the default budget: a stall noticed after a full
    # STALL_TIMEOUT must still leave the whole budget for waiting before the retry.
    timings = Timings()
    policy = RetryPolicy.of(timings, 4)
    assert timings.stall_timeout >= timings.retry_budget
    first_wait = policy.delay(0, None, random.Random(1))
    assert policy.allows(0, 0.0, first_wait)


def test_retry_after_headers_in_seconds_milliseconds_and_dates() -> None:
    assert retry_after(httpx2.Headers({"retry-after": "3"})) == 3.0
    assert retry_after(httpx2.Headers({"retry-after-ms": "250"})) == 0.25
    future = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    assert 25 <= (retry_after(httpx2.Headers({"retry-after": future})) or 0) <= 31
    assert retry_after(httpx2.Headers({})) is None


def _status(code: int, kind: str) -> anthropic.APIStatusError:
    response = httpx2.Response(
        code, request=httpx2.Request("POST", "http://x/v1/messages"), headers={"retry-after": "2"}
    )
    return anthropic.APIStatusError(
        kind, response=response, body={"type": "error", "error": {"type": kind}}
    )


def test_classification() -> None:
    assert classify(_status(529, "overloaded_error")).retryable
    assert classify(_status(529, "overloaded_error")).retry_after == 2.0
    assert classify(_status(429, "rate_limit_error")).code == "rate_limit_error"
    assert classify(_status(408, "timeout_error")).retryable
    assert not classify(_status(400, "invalid_request_error")).retryable
    assert not classify(_status(401, "authentication_error")).retryable
    assert "API key" in classify(_status(401, "authentication_error")).message
    assert classify(httpx2.ReadError("reset")).retryable
    assert classify(UpstreamInterrupted("overloaded_error", "x")).retryable
    assert not classify(UpstreamInterrupted("invalid_request_error", "x")).retryable
    assert classify(UpstreamInterrupted("stalled", "x")).retryable
    assert not classify(KeyError("bug")).retryable
