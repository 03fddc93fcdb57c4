"""Fit each request into the model's context window, learning from what the API reports.

The estimate (engine/upstream/estimate.py) is conservative; where the API reports more input
tokens for a request than estimated (its usage, or a "prompt is too long" refusal), the
session's estimates are scaled up from then on, on this worker (a worker that has not seen
the session starts from the plain estimate). Only ever up, so the trim point moves rarely.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from engine.upstream.estimate import block_tokens, request_input_tokens
from engine.upstream.selection import Plan, plan
from engine.upstream.strategy import OPENER, Strategy, model_view

__all__ = ["ContextWindow", "Fit"]

DEFAULT_CONTEXT_TOKENS = 200_000
DEFAULT_MAX_TOKENS = 4096
# Sessions whose learned scale is remembered.
REMEMBERED = 4096
# Scales are rounded up to this step, so small variations between calls change nothing.
STEP = 1 / 32
MAX_SCALE = 8.0
# A request whose estimate fills more than this share of the room is counted by the API
# (count_tokens) before it is sent: near the window the estimate alone may be wrong.
NEAR = 0.9

Overhead = Callable[[list[dict[str, Any]]], int]


@dataclass(frozen=True)
class Fit:
    """The plan of one request and its whole estimate (tools and system included)."""

    plan: Plan
    estimate: int
    scale: float
    limit: int
    max_tokens: int = DEFAULT_MAX_TOKENS

    @property
    def near(self) -> bool:
        """True when the request's estimate is within 10% of the room: worth counting."""
        return self.estimate * self.scale >= NEAR * (self.limit - self.max_tokens)

    def fits(self, counted: int) -> bool:
        """True when `counted` input tokens and the output budget fit the window."""
        return counted + self.max_tokens <= self.limit


@dataclass
class _Learned:
    scale: float = 1.0
    limit: int | None = None


def _tools_only(tools: list[dict[str, Any]]) -> int:
    return sum(block_tokens(tool) for tool in tools)


class ContextWindow:
    """Plans every request of this process within the window; shared by all turns (in the loop)."""

    def __init__(
        self,
        context_tokens: int = DEFAULT_CONTEXT_TOKENS,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        overhead: Overhead = _tools_only,
        strategy: Strategy | None = None,
    ) -> None:
        if context_tokens <= max_tokens:
            raise ValueError(
                f"MODEL_CONTEXT_TOKENS ({context_tokens}) must exceed MAX_TOKENS ({max_tokens})"
            )
        self.context_tokens, self.max_tokens, self.overhead = context_tokens, max_tokens, overhead
        self.strategy = strategy or Strategy()
        self._learned: OrderedDict[str, _Learned] = OrderedDict()

    def fit(self, session_id: str, history: list[dict[str, Any]], tools: list[Any]) -> Fit:
        """Return what to send of `history` so the request fits, with its estimate."""
        learned = self._get(session_id)
        limit = min(self.context_tokens, learned.limit or self.context_tokens)
        fixed = self.overhead(tools)
        room = (limit - self.max_tokens) / learned.scale - fixed
        offset, view = model_view(history, self.strategy.kind)
        # With edit the API clears old tool results: trim leaves them whole for it to clear.
        chosen = plan(view, room, elide=self.strategy.kind != "edit")
        if view and view[0] is OPENER:
            # first_kept indexes the stored history, where view[1:] starts at offset + 1 (a
            # compacted view opens with a constant opener the API drops: its first stored
            # message is the one holding the compaction block).
            chosen = replace(chosen, first_kept=max(chosen.first_kept, 1) + offset)
        return Fit(chosen, fixed + chosen.tokens, learned.scale, limit, self.max_tokens)

    def observe(self, session_id: str, fit: Fit, usage: dict[str, Any] | None) -> None:
        """Learn from the input tokens the API reported for a request planned as `fit`."""
        self.counted(session_id, fit, request_input_tokens(usage))

    def counted(self, session_id: str, fit: Fit, tokens: int) -> None:
        """Learn from the API's count of the input tokens of a request planned as `fit`."""
        if fit.estimate > 0 and tokens > fit.estimate * fit.scale:
            self._raise(session_id, tokens / fit.estimate, None)

    def refused(self, session_id: str, fit: Fit, tokens: int, maximum: int) -> None:
        """Learn from "prompt is too long: `tokens` > `maximum`" for a request planned as `fit`."""
        # A little over the exact ratio, so the retry is not refused again by a rounding.
        scale = tokens / fit.estimate * 1.02 if fit.estimate > 0 else 1.0
        self._raise(session_id, scale, maximum if maximum < self.context_tokens else None)

    def _get(self, session_id: str) -> _Learned:
        learned = self._learned.get(session_id)
        if learned is None:
            return _Learned()
        self._learned.move_to_end(session_id)
        return _Learned(learned.scale, learned.limit)

    def _raise(self, session_id: str, scale: float, limit: int | None) -> None:
        scale = min(MAX_SCALE, math.ceil(scale / STEP) * STEP)
        learned = self._learned.setdefault(session_id, _Learned())
        self._learned.move_to_end(session_id)
        learned.scale = max(learned.scale, scale)
        if limit is not None:
            learned.limit = min(learned.limit or limit, limit)
        while len(self._learned) > REMEMBERED:
            self._learned.popitem(last=False)
