"""Anthropic's documented prompt-caching rules applied to request bodies (pure, no I/O).

- The prompt is a list of blocks in the order tools -> system -> messages: each tool definition,
  each system block (a string system is one text block), each message content block (string
  content is one text block).
- Tokens (a deterministic stand-in for the tokenizer): a block costs ceil(bytes / 4) of its
  canonical JSON (sorted keys, compact, UTF-8, without `cache_control`).
- A prefix's identity is a hash chain over the model and its blocks, each with its role and
  whether it opens a message. `cache_control` is not part of it: a marker that moves keeps
  every prefix before it readable.
- A `cache_control` marker (at most 4; 1h ones before 5m ones; never on thinking or empty
  text) makes the prefix up to and including its block an entry, if it has at least 1,024
  tokens. A read is the longest live entry found at a marker or at one of the 20 block
  boundaries before it; reading refreshes the entry's TTL. The tokens from the read up to the
  last marker are written: 1.25x the base price for 5m, 2x for 1h; a read costs 0.1x.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

LOOKBACK = 20
MIN_TOKENS = 1024
MAX_BREAKPOINTS = 4
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
WRITE_PRICE = {"5m": 1.25, "1h": 2.0}
READ_PRICE = 0.1


class RuleError(ValueError):
    """A request the API would refuse with a 400."""


@dataclass(frozen=True)
class Point:
    """A block boundary: the prefix up to and including one block."""

    key: str
    tokens: int  # of the whole prefix
    ttl: str | None  # the block's marker TTL, None when it has no marker


@dataclass(frozen=True)
class Usage:
    """What one request is billed for, in the API's usage fields."""

    input_tokens: int
    cache_read_input_tokens: int = 0
    write_5m: int = 0
    write_1h: int = 0

    @property
    def cache_creation_input_tokens(self) -> int:
        """All tokens written to the cache."""
        return self.write_5m + self.write_1h

    @property
    def total(self) -> int:
        """Every input token of the request, cached or not."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    def billed(self) -> float:
        """Input tokens at base price equivalents."""
        return (
            self.input_tokens
            + READ_PRICE * self.cache_read_input_tokens
            + WRITE_PRICE["5m"] * self.write_5m
            + WRITE_PRICE["1h"] * self.write_1h
        )

    def api(self) -> dict[str, Any]:
        """The usage object as the API reports it."""
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.write_5m,
                "ephemeral_1h_input_tokens": self.write_1h,
            },
        }


def canonical(block: Any) -> bytes:
    """Return a block's bytes as the cache compares them (markers left out)."""
    return json.dumps(
        _unmarked(block), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode()


def tokens_of(block: Any) -> int:
    """Return a block's token count: ceil(bytes / 4) of its canonical JSON."""
    return -(-len(canonical(block)) // 4)


def _as_blocks(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def points(body: dict[str, Any]) -> list[Point]:
    """Return every block boundary of a request, in prefix order."""
    items: list[tuple[str, Any]] = [("tool", tool) for tool in body.get("tools") or []]
    items += [("system", block) for block in _as_blocks(body.get("system"))]
    for message in body.get("messages") or []:
        for j, block in enumerate(_as_blocks(message.get("content"))):
            items.append((f"{message.get('role')}{'+' if j == 0 else ''}", block))
    chain = hashlib.sha256(str(body.get("model")).encode())
    out: list[Point] = []
    total = 0
    for where, block in items:
        chain.update(b"\0" + where.encode() + b"\0" + canonical(block))
        total += tokens_of(block)
        ttl = None
        if isinstance(block, dict) and "cache_control" in block:
            ttl = _ttl(block)
        out.append(Point(chain.hexdigest(), total, ttl))
    return out


def _ttl(block: dict[str, Any]) -> str:
    control = block["cache_control"]
    if not isinstance(control, dict) or control.get("type") != "ephemeral":
        raise RuleError("cache_control.type must be 'ephemeral'")
    ttl = control.get("ttl", "5m")
    if ttl not in TTL_SECONDS:
        raise RuleError(f"cache_control.ttl must be '5m' or '1h', got {ttl!r}")
    if block.get("type") in ("thinking", "redacted_thinking"):
        raise RuleError("thinking blocks cannot carry cache_control")
    if block.get("type") == "text" and not block.get("text"):
        raise RuleError("cache_control cannot be set for empty text blocks")
    return str(ttl)


def check(prompt: list[Point]) -> list[int]:
    """Return the marker positions, or raise RuleError if the API would refuse them."""
    marks = [i for i, point in enumerate(prompt) if point.ttl]
    if len(marks) > MAX_BREAKPOINTS:
        raise RuleError(f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided")
    ttls = [prompt[i].ttl for i in marks]
    if "5m" in ttls and "1h" in ttls[ttls.index("5m") :]:
        raise RuleError("a ttl='1h' cache_control must not come after a ttl='5m' one")
    return marks


@dataclass
class PromptCache:
    """The cache entries of one organisation and model: prefix key -> (expiry, ttl)."""

    clock: Callable[[], float] = time.monotonic
    entries: dict[str, tuple[float, str]] = field(default_factory=dict)

    def _live(self, key: str, now: float) -> bool:
        entry = self.entries.get(key)
        return entry is not None and entry[0] > now

    def apply(self, body: dict[str, Any]) -> Usage:
        """Serve one request: read what is cached, write what its markers ask, bill it."""
        return self.apply_points(points(body))

    def apply_points(self, prompt: list[Point]) -> Usage:
        """Serve one request given as its block boundaries."""
        marks = check(prompt)
        now = self.clock()
        read = -1
        for mark in marks:
            for i in range(mark, max(-1, mark - LOOKBACK - 1), -1):
                if self._live(prompt[i].key, now):
                    read = max(read, i)
                    break
        if read >= 0:
            ttl = self.entries[prompt[read].key][1]
            self.entries[prompt[read].key] = (now + TTL_SECONDS[ttl], ttl)
        done = prompt[read].tokens if read >= 0 else 0
        written = {"5m": 0, "1h": 0}
        for mark in marks:
            point = prompt[mark]
            assert point.ttl is not None
            if point.tokens < MIN_TOKENS:
                continue
            if mark > read:
                written[point.ttl] += point.tokens - done
                done = point.tokens
            # A marker at or before the read refreshes its entry; after it, creates one.
            if mark > read or self._live(point.key, now):
                self.entries[point.key] = (now + TTL_SECONDS[point.ttl], point.ttl)
        cached = prompt[read].tokens if read >= 0 else 0
        total = prompt[-1].tokens if prompt else 0
        return Usage(
            input_tokens=total - cached - written["5m"] - written["1h"],
            cache_read_input_tokens=cached,
            write_5m=written["5m"],
            write_1h=written["1h"],
        )


def strip(body: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of a request without any cache_control (the same prompt, uncached)."""
    out = dict(body)
    for name in ("tools", "system"):
        if isinstance(body.get(name), list):
            out[name] = [_unmarked(block) for block in body[name]]
    out["messages"] = [
        {**m, "content": [_unmarked(b) for b in m["content"]]}
        if isinstance(m.get("content"), list)
        else m
        for m in body.get("messages") or []
    ]
    return out


def _unmarked(block: Any) -> Any:
    if isinstance(block, dict):
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block
