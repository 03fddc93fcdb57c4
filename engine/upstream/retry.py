"""When and how long to retry a model call, and how to describe a failure to people."""

from __future__ import annotations

import email.utils
import random
import re
import time
from dataclasses import dataclass

import aiohttp
import anthropic
import httpx2

from config import Timings
from domain.backoff import backoff_delay
from domain.errors import UpstreamInterrupted

# What a broken connection looks like (aiohttp's errors are mostly mapped to httpx2's by the
# SDK's adapter, but not always).
CONNECTION_ERRORS = (
    anthropic.APIConnectionError,
    httpx2.TransportError,
    aiohttp.ClientError,
    ConnectionError,
    TimeoutError,
)
# Every way a model call fails (anything else raised during one is our own bug).
MODEL_ERRORS = (UpstreamInterrupted, anthropic.APIError, httpx2.HTTPError, *CONNECTION_ERRORS)

RETRY_STATUSES = {408, 409, 429, 500, 502, 503, 504, 529}
FINAL_ERROR_TYPES = {
    "invalid_request_error",
    "authentication_error",
    "permission_error",
    "not_found_error",
    "request_too_large",
    "billing_error",
}
# The two ways the API says a prompt does not fit: "prompt is too long: 215000 tokens >
# 200000 maximum", and "input length and `max_tokens` exceed context limit: 188240 + 21333
# > 200000" (the prompt, the output budget and the window).
TOO_LONG = (
    re.compile(r"prompt is too long:\s*(\d+)\s*tokens?\s*>\s*(\d+)"),
    re.compile(r"exceed context limit:\s*(\d+)\s*\+\s*\d+\s*>\s*(\d+)"),
)
# The 400 for a thinking block whose prefix changed (the docs' "Fix a thinking block bound to
# a different conversation").
BOUND = re.compile(r"bound to a different conversation|prefix_mismatch_behavior")
TOO_LONG_MESSAGE = (
    "This turn does not fit the model's context window even with the earlier turns left "
    "out ({tokens} tokens > {maximum}); ask again more briefly."
)


@dataclass(frozen=True)
class Failure:
    """A classified model-call failure."""

    code: str
    message: str
    retryable: bool
    retry_after: float | None = None
    # (tokens, maximum) when the API refused the prompt as too long for the window.
    too_long: tuple[int, int] | None = None
    # The API refused a thinking block bound to a different prefix ("Prefix checks on
    # thinking blocks"): sending `drop_block` is the documented way on.
    bound: bool = False


@dataclass(frozen=True)
class RetryPolicy:
    """Jittered exponential backoff bounded by a retry count and a total time budget."""

    max_retries: int
    budget: float
    base: float
    cap: float

    @classmethod
    def of(cls, timings: Timings, max_retries: int) -> RetryPolicy:
        """The policy of `max_retries` with the backoff and budget of `timings`."""
        return cls(max_retries, timings.retry_budget, timings.backoff_base, timings.backoff_cap)

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number `attempt` (0-based)."""
        if retry_after is not None:
            return max(0.0, retry_after)
        return backoff_delay(self.base, self.cap, attempt, rng)

    def allows(self, attempt: int, waited: float, wait: float) -> bool:
        """True if retry number `attempt` may happen after waiting `wait` more seconds.

        Only time spent waiting between attempts counts (`waited` so far): the attempts
        themselves may take long (a long answer, a stall noticed after STALL_TIMEOUT).
        """
        return attempt < self.max_retries and waited + wait <= self.budget


def classify(err: BaseException) -> Failure:
    """Map an exception from a model call to a Failure."""
    if isinstance(err, UpstreamInterrupted):
        return Failure(err.code, err.message, err.code not in FINAL_ERROR_TYPES)
    if isinstance(err, anthropic.APIStatusError):
        status = err.status_code
        kind = _error_type(err) or f"http_{status}"
        sizes = too_long(_error_text(err)) if status in (400, 413) else None
        if sizes is not None:
            tokens, maximum = sizes
            message = TOO_LONG_MESSAGE.format(tokens=tokens, maximum=maximum)
            return Failure("prompt_too_long", message, False, too_long=sizes)
        if status == 400 and BOUND.search(_error_text(err)):
            return Failure(kind, _status_message(status, err), False, bound=True)
        return Failure(
            kind,
            _status_message(status, err),
            status in RETRY_STATUSES or status >= 500,
            retry_after(err.response.headers),
        )
    if isinstance(err, CONNECTION_ERRORS):
        return Failure(
            "connection_error", f"The connection to the model failed ({type(err).__name__}).", True
        )
    return Failure("internal_error", f"The model call failed ({type(err).__name__}).", False)


def too_long(message: str) -> tuple[int, int] | None:
    """Return (tokens, maximum) from the API's "prompt is too long" message, else None."""
    for pattern in TOO_LONG:
        found = pattern.search(message)
        if found:
            return int(found.group(1)), int(found.group(2))
    return None


def retry_after(headers: httpx2.Headers) -> float | None:
    """Read `retry-after-ms` or `retry-after` (seconds or an HTTP date), if present."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_tz(value)
        return None if parsed is None else max(0.0, email.utils.mktime_tz(parsed) - time.time())


def _error_type(err: anthropic.APIStatusError) -> str | None:
    body = err.body if isinstance(err.body, dict) else {}
    inner = body.get("error") if isinstance(body.get("error"), dict) else body
    kind = inner.get("type") if isinstance(inner, dict) else None
    return kind if isinstance(kind, str) else None


def _error_text(err: anthropic.APIStatusError) -> str:
    body = err.body if isinstance(err.body, dict) else {}
    inner = body.get("error") if isinstance(body.get("error"), dict) else body
    text = inner.get("message") if isinstance(inner, dict) else None
    return text if isinstance(text, str) else str(err.message)


def _status_message(status: int, err: anthropic.APIStatusError) -> str:
    if status == 529:
        return "The model service is overloaded; try again in a minute."
    if status == 429:
        return "The model service is rate limiting this server; try again shortly."
    if status in (401, 403):
        return "The server's Anthropic API key was rejected; an operator must fix it."
    if status >= 500:
        return f"The model service failed (HTTP {status}); try again."
    return f"The model service rejected the request (HTTP {status}): {err.message}"
